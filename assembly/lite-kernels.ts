// AssemblyScript source of xling/lite's WebAssembly SIMD kernels (scripts/build-lite-wasm.mjs
// compiles it into src/lite/kernels-wasm.ts; not part of the TypeScript project). The kernels
// own no memory: the model file and each caller's scratch lie in an imported memory the
// TypeScript side lays out (src/lite/wasm.ts), and every pointer comes in as an argument. They
// compute what src/lite/model.ts's pure-TypeScript path computes, in float32 with 4-wide SIMD:
// the mean of the feature rows (fp32, fp16, or int8 rows times their per-row scale), tanh, and
// the projection y = W h + b of a batch of sentences.

const DT_F32: i32 = 0;
const DT_F16: i32 = 1;
const DT_I8: i32 = 2;

/**
 * The mean of the n rows ids[0..n) of a table (fd columns) into out (fd float32), then tanh when
 * act is 1. Each row is weighted by float32(1/n) and added in float32.
 */
function bag(dtype: i32, table: usize, scales: usize, fd: i32, ids: usize, n: i32, out: usize, act: i32): void {
  const bytes = <usize>fd << 2;
  for (let j: usize = 0; j < bytes; j += 16) v128.store(out + j, f32x4.splat(0));
  const w = f32x4.splat(<f32>(1.0 / <f64>max(n, 1)));
  if (dtype == DT_F32) {
    for (let k = 0; k < n; k++) {
      const row = table + <usize>load<i32>(ids + (<usize>k << 2)) * bytes;
      for (let j: usize = 0; j < bytes; j += 32) {
        v128.store(out + j, f32x4.add(v128.load(out + j), f32x4.mul(w, v128.load(row + j))));
        v128.store(out + j + 16, f32x4.add(v128.load(out + j + 16), f32x4.mul(w, v128.load(row + j + 16))));
      }
    }
  } else if (dtype == DT_I8) {
    for (let k = 0; k < n; k++) {
      const r = <usize>load<i32>(ids + (<usize>k << 2));
      const row = table + r * <usize>fd;
      const s = f32x4.splat(load<f32>(scales + (r << 2)));
      // 8 int8 values → two float32x4 (each q * scale rounded to float32, then weighted)
      for (let j: usize = 0, o: usize = 0; j < <usize>fd; j += 8, o += 32) {
        const q = v128.load8x8_s(row + j);
        const lo = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(q)), s);
        const hi = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(q)), s);
        v128.store(out + o, f32x4.add(v128.load(out + o), f32x4.mul(w, lo)));
        v128.store(out + o + 16, f32x4.add(v128.load(out + o + 16), f32x4.mul(w, hi)));
      }
    }
  } else {
    // float16 bits → float32: the magnitude bits moved to float32's place, times 2^112 (exact for
    // normal and subnormal halves; tables hold no infinities or NaNs), then the sign
    const mask = i32x4.splat(0x7fff), signBit = i32x4.splat(0x8000), scale = f32x4.splat(<f32>5.192296858534828e33);
    for (let k = 0; k < n; k++) {
      const row = table + <usize>load<i32>(ids + (<usize>k << 2)) * (<usize>fd << 1);
      for (let j: usize = 0, o: usize = 0; j < <usize>fd; j += 4, o += 16) {
        const h = v128.load16x4_u(row + (j << 1));
        const mag = f32x4.mul(i32x4.shl(v128.and(h, mask), 13), scale);
        const x = v128.or(mag, i32x4.shl(v128.and(h, signBit), 16));
        v128.store(out + o, f32x4.add(v128.load(out + o), f32x4.mul(w, x)));
      }
    }
  }
  if (act == 1) for (let j: usize = 0; j < bytes; j += 4) store<f32>(out + j, <f32>Math.tanh(<f64>load<f32>(out + j)));
}

@inline function hsum(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/**
 * y (nb rows of d) = h (nb rows of fd) · Wᵀ + b, W: d rows of fd (row-major, as torch's Linear).
 * nb is a multiple of 4 and d of 2: four sentences and two outputs at a time, each weight read once
 * for four sentences. fd is a multiple of 4.
 */
function project(W: usize, b: usize, d: i32, fd: i32, h: usize, nb: i32, y: usize): void {
  const rowBytes = <usize>fd << 2, outBytes = <usize>d << 2;
  for (let s = 0; s < nb; s += 4) {
    const h0 = h + <usize>s * rowBytes, h1 = h0 + rowBytes, h2 = h1 + rowBytes, h3 = h2 + rowBytes;
    const y0 = y + <usize>s * outBytes, y1 = y0 + outBytes, y2 = y1 + outBytes, y3 = y2 + outBytes;
    for (let i = 0; i < d; i += 2) {
      const w0 = W + <usize>i * rowBytes, w1 = w0 + rowBytes;
      let a00 = f32x4.splat(0), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
      for (let j: usize = 0; j < rowBytes; j += 16) {
        const x0 = v128.load(h0 + j), x1 = v128.load(h1 + j), x2 = v128.load(h2 + j), x3 = v128.load(h3 + j);
        const u = v128.load(w0 + j), v = v128.load(w1 + j);
        a00 = f32x4.add(a00, f32x4.mul(u, x0)); a01 = f32x4.add(a01, f32x4.mul(u, x1));
        a02 = f32x4.add(a02, f32x4.mul(u, x2)); a03 = f32x4.add(a03, f32x4.mul(u, x3));
        a10 = f32x4.add(a10, f32x4.mul(v, x0)); a11 = f32x4.add(a11, f32x4.mul(v, x1));
        a12 = f32x4.add(a12, f32x4.mul(v, x2)); a13 = f32x4.add(a13, f32x4.mul(v, x3));
      }
      const o = <usize>i << 2;
      const b0 = load<f32>(b + o), b1 = load<f32>(b + o + 4);
      store<f32>(y0 + o, b0 + hsum(a00)); store<f32>(y1 + o, b0 + hsum(a01));
      store<f32>(y2 + o, b0 + hsum(a02)); store<f32>(y3 + o, b0 + hsum(a03));
      store<f32>(y0 + o + 4, b1 + hsum(a10)); store<f32>(y1 + o + 4, b1 + hsum(a11));
      store<f32>(y2 + o + 4, b1 + hsum(a12)); store<f32>(y3 + o + 4, b1 + hsum(a13));
    }
  }
}

/**
 * A batch of nb sentences: sentence s's feature ids are ids[offs[s] .. offs[s+1]) (int32 row
 * numbers); its pooled, activated features go to h (row s, fd float32; rows nb.. up to a multiple
 * of 4 are zeroed) and its projection to y (row s, d float32).
 */
export function embedBatch(dtype: i32, table: usize, scales: usize, fd: i32, act: i32, W: usize, b: usize, d: i32,
  ids: usize, offs: usize, nb: i32, h: usize, y: usize): void {
  const rowBytes = <usize>fd << 2;
  for (let s = 0; s < nb; s++) {
    const a = load<i32>(offs + (<usize>s << 2)), e = load<i32>(offs + (<usize>(s + 1) << 2));
    bag(dtype, table, scales, fd, ids + (<usize>a << 2), e - a, h + <usize>s * rowBytes, act);
  }
  const padded = (nb + 3) & ~3;
  for (let s = nb; s < padded; s++) memory.fill(h + <usize>s * rowBytes, 0, rowBytes);
  project(W, b, d, fd, h, padded, y);
}
