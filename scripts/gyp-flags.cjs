// Computes compiler/linker flags for binding.gyp. Debian's multiarch libtorch/faiss by default;
// LIBTORCH (an unpacked libtorch distribution, cxx11 ABI) and FAISS_HOME (an install prefix)
// override them, the way tch-rs does.
const fs = require('node:fs');
const path = require('node:path');
const { execSync } = require('node:child_process');

function multiarch() {
  try {
    return execSync('gcc -print-multiarch', { encoding: 'utf8' }).trim() || 'x86_64-linux-gnu';
  } catch {
    return 'x86_64-linux-gnu';
  }
}
const libdir = `/usr/lib/${multiarch()}`;
const torch = process.env.LIBTORCH;
const faiss = process.env.FAISS_HOME;

function includes() {
  const out = [];
  if (torch) out.push(`${torch}/include`, `${torch}/include/torch/csrc/api/include`);
  else out.push('/usr/include/torch/csrc/api/include');
  if (faiss) out.push(`${faiss}/include`);
  return out;
}

function libs() {
  const out = [];
  // faiss: prefer the static archive (Debian ships only libfaiss.a), fall back to a shared lib.
  const faissLib = faiss ? [`${faiss}/lib`, `${faiss}/lib64`] : [libdir];
  let faissFound = false;
  for (const d of faissLib) {
    if (fs.existsSync(path.join(d, 'libfaiss.a'))) {
      out.push(path.join(d, 'libfaiss.a'));
      faissFound = true;
      break;
    }
    if (fs.existsSync(path.join(d, 'libfaiss.so'))) {
      out.push(`-L${d}`, `-Wl,-rpath,${d}`, '-lfaiss');
      faissFound = true;
      break;
    }
  }
  if (!faissFound) throw new Error(`libfaiss not found in ${faissLib.join(', ')} (install libfaiss-dev or set FAISS_HOME)`);
  if (torch) {
    const tl = `${torch}/lib`;
    out.push(`-L${tl}`, `-Wl,-rpath,${tl}`);
    if (fs.existsSync(path.join(tl, 'libtorch_cuda.so'))) out.push('-Wl,--no-as-needed', '-ltorch_cuda', '-lc10_cuda', '-Wl,--as-needed');
  } else if (!fs.existsSync(path.join(libdir, 'libtorch.so'))) {
    throw new Error(`libtorch not found in ${libdir} (install libtorch-dev or set LIBTORCH)`);
  }
  out.push('-ltorch', '-ltorch_cpu', '-lc10', '-lopenblas', '-lgomp', '-lpthread');
  return out;
}

/** What the build lacks (libtorch's headers or library, faiss), in one phrase each; empty when nothing. */
function missing() {
  const out = [];
  const header = torch ? `${torch}/include/torch/csrc/api/include/torch/torch.h` : '/usr/include/torch/csrc/api/include/torch/torch.h';
  const lib = torch ? `${torch}/lib/libtorch.so` : path.join(libdir, 'libtorch.so');
  if (!fs.existsSync(lib) || !fs.existsSync(header)) out.push(`libtorch (no ${fs.existsSync(lib) ? header : lib})`);
  const faissDirs = faiss ? [`${faiss}/lib`, `${faiss}/lib64`] : [libdir];
  if (!faissDirs.some((d) => fs.existsSync(path.join(d, 'libfaiss.a')) || fs.existsSync(path.join(d, 'libfaiss.so'))))
    out.push(`faiss (no libfaiss in ${faissDirs.join(', ')})`);
  return out;
}

module.exports = { includes, libs, missing };

if (require.main === module) {
  const what = process.argv[2];
  if (what === 'include') console.log(includes().join(' '));
  else if (what === 'libs') console.log(libs().join(' '));
  else {
    console.error('usage: gyp-flags.cjs include|libs');
    process.exit(2);
  }
}
