{
  "targets": [{
    "target_name": "xling",
    "sources": ["native/addon.cc", "native/torch_binding.cc", "native/lstm.cc", "native/bag.cc", "native/row_linear.cc", "native/gather_dot.cc", "native/transformer.cc", "native/cpu_allocator.cc", "native/faiss_binding.cc", "native/json_format.cc", "native/hamming.cc", "native/sgemm.cc"],
    "include_dirs": [
      "<!(node -p \"require('node-addon-api').include_dir\")",
      "<!@(node scripts/gyp-flags.cjs include)"
    ],
    "libraries": ["<!@(node scripts/gyp-flags.cjs libs)"],
    "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
    "cflags!": ["-fno-exceptions", "-fno-rtti"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
    "cflags_cc": ["-std=c++17", "-fexceptions", "-frtti", "-O3", "-fno-math-errno", "-fopenmp", "-Wno-unused-parameter", "-Wno-deprecated-declarations"],
    "ldflags": ["-fopenmp"]
  }]
}
