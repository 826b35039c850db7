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
/** Rows summed in registers before they are added to the sentence's sum. */
const CHUNK: usize = 32;

@inline function rowBytes(dtype: i32, fd: i32): usize {
  return dtype == DT_F32 ? <usize>fd << 2 : dtype == DT_F16 ? <usize>fd << 1 : <usize>fd;
}

/**
 * Reads one word of every 64-byte line of the n rows first, all independent of each other, so
 * that the memory system fetches many rows at once (the sum below then finds them in cache; a
 * row at a time, each random row's latency would be waited for in turn). WebAssembly has no
 * prefetch instruction: the words are xor-ed together and the result stored (at out, which the
 * sum then overwrites) so that no load is dropped.
 */
function touch(table: usize, bytes: usize, scales: usize, ids: usize, n: i32, out: usize): void {
  let x: i32 = 0;
  for (let k = 0; k < n; k++) {
    const r = <usize>load<i32>(ids + (<usize>k << 2));
    const row = table + r * bytes;
    for (let j: usize = 0; j < bytes; j += 64) x ^= load<i32>(row + j);
    // an int8 row's scale: a random read of its own
    if (scales) x ^= load<i32>(scales + (r << 2));
  }
  store<i32>(out, x);
}

/**
 * The mean of the n rows ids[0..n) of a table (fd columns, a multiple of 32) into out (fd
 * float32), then tanh when act is 1: the rows summed in float32 (int8 rows: each value times its
 * row's scale, rounded to float32, as the native path dequantises), times float32(1/n). 32 columns
 * at a time over all rows, the sums in registers.
 */
function bag(dtype: i32, table: usize, scales: usize, fd: i32, ids: usize, n: i32, out: usize, act: i32): void {
  const bytes = rowBytes(dtype, fd);
  touch(table, bytes, dtype == DT_I8 ? scales : 0, ids, n, out);
  const w = f32x4.splat(<f32>(1.0 / <f64>max(n, 1)));
  const end = <usize>n << 2;
  for (let j: usize = 0; j < (<usize>fd << 2); j += 16) v128.store(out + j, f32x4.splat(0));
  for (let c: usize = 0; c < <usize>fd; c += 32) for (let k0: usize = 0; k0 < end; k0 += CHUNK << 2) {
    // CHUNK rows at a time into registers, then into out: a float32 sum's rounding error grows
    // with the rows one sum adds (a sentence has up to maxFeatures of them)
    const k1 = min(end, k0 + (CHUNK << 2));
    let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    if (dtype == DT_F32) {
      for (let k = k0; k < k1; k += 4) {
        const row = table + <usize>load<i32>(ids + k) * bytes + (c << 2);
        a0 = f32x4.add(a0, v128.load(row)); a1 = f32x4.add(a1, v128.load(row, 16));
        a2 = f32x4.add(a2, v128.load(row, 32)); a3 = f32x4.add(a3, v128.load(row, 48));
        a4 = f32x4.add(a4, v128.load(row, 64)); a5 = f32x4.add(a5, v128.load(row, 80));
        a6 = f32x4.add(a6, v128.load(row, 96)); a7 = f32x4.add(a7, v128.load(row, 112));
      }
    } else if (dtype == DT_I8) {
      for (let k = k0; k < k1; k += 4) {
        const r = <usize>load<i32>(ids + k);
        const row = table + r * bytes + c;
        const s = f32x4.splat(load<f32>(scales + (r << 2)));
        let q = v128.load8x8_s(row);
        a0 = f32x4.add(a0, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(q)), s));
        a1 = f32x4.add(a1, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(q)), s));
        q = v128.load8x8_s(row, 8);
        a2 = f32x4.add(a2, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(q)), s));
        a3 = f32x4.add(a3, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(q)), s));
        q = v128.load8x8_s(row, 16);
        a4 = f32x4.add(a4, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(q)), s));
        a5 = f32x4.add(a5, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(q)), s));
        q = v128.load8x8_s(row, 24);
        a6 = f32x4.add(a6, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(q)), s));
        a7 = f32x4.add(a7, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(q)), s));
      }
    } else {
      for (let k = k0; k < k1; k += 4) {
        const row = table + <usize>load<i32>(ids + k) * bytes + (c << 1);
        a0 = f32x4.add(a0, half4(v128.load16x4_u(row))); a1 = f32x4.add(a1, half4(v128.load16x4_u(row, 8)));
        a2 = f32x4.add(a2, half4(v128.load16x4_u(row, 16))); a3 = f32x4.add(a3, half4(v128.load16x4_u(row, 24)));
        a4 = f32x4.add(a4, half4(v128.load16x4_u(row, 32))); a5 = f32x4.add(a5, half4(v128.load16x4_u(row, 40)));
        a6 = f32x4.add(a6, half4(v128.load16x4_u(row, 48))); a7 = f32x4.add(a7, half4(v128.load16x4_u(row, 56)));
      }
    }
    const o = out + (c << 2);
    v128.store(o, f32x4.add(v128.load(o), a0)); v128.store(o, f32x4.add(v128.load(o, 16), a1), 16);
    v128.store(o, f32x4.add(v128.load(o, 32), a2), 32); v128.store(o, f32x4.add(v128.load(o, 48), a3), 48);
    v128.store(o, f32x4.add(v128.load(o, 64), a4), 64); v128.store(o, f32x4.add(v128.load(o, 80), a5), 80);
    v128.store(o, f32x4.add(v128.load(o, 96), a6), 96); v128.store(o, f32x4.add(v128.load(o, 112), a7), 112);
  }
  for (let j: usize = 0; j < (<usize>fd << 2); j += 16) v128.store(out + j, f32x4.mul(v128.load(out + j), w));
  if (act == 1) tanhRow(out, fd);
}

/**
 * Four float16 values (zero-extended to 32 bits) → float32: the magnitude bits moved to float32's
 * place, times 2^112 (exact for normal and subnormal halves; tables hold no infinities or NaNs),
 * then the sign.
 */
@inline function half4(h: v128): v128 {
  const mag = f32x4.mul(i32x4.shl(v128.and(h, i32x4.splat(0x7fff)), 13), f32x4.splat(<f32>5.192296858534828e33));
  return v128.or(mag, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
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

/**
 * tanh of four float32: x clamped to ±7.905311 (where float32 tanh is ±1), then a rational
 * function of degree 13/6 (Eigen's float tanh), x itself below 4e-4; within 4e-7 of tanh.
 */
@inline function tanh4(x: v128): v128 {
  const c = f32x4.splat(<f32>7.90531110763549805);
  const xc = f32x4.min(c, f32x4.max(f32x4.neg(c), x));
  const x2 = f32x4.mul(xc, xc);
  let p = f32x4.splat(<f32>-2.76076847742355e-16);
  p = f32x4.add(f32x4.mul(p, x2), f32x4.splat(<f32>2.00018790482477e-13));
  p = f32x4.add(f32x4.mul(p, x2), f32x4.splat(<f32>-8.60467152213735e-11));
  p = f32x4.add(f32x4.mul(p, x2), f32x4.splat(<f32>5.12229709037114e-8));
  p = f32x4.add(f32x4.mul(p, x2), f32x4.splat(<f32>1.48572235717979e-5));
  p = f32x4.add(f32x4.mul(p, x2), f32x4.splat(<f32>6.37261928875436e-4));
  p = f32x4.add(f32x4.mul(p, x2), f32x4.splat(<f32>4.89352455891786e-3));
  p = f32x4.mul(p, xc);
  let q = f32x4.splat(<f32>1.19825839466702e-6);
  q = f32x4.add(f32x4.mul(q, x2), f32x4.splat(<f32>1.185347056866540e-4));
  q = f32x4.add(f32x4.mul(q, x2), f32x4.splat(<f32>2.26843463243900e-3));
  q = f32x4.add(f32x4.mul(q, x2), f32x4.splat(<f32>4.89352518554385e-3));
  return v128.bitselect(x, f32x4.div(p, q), f32x4.lt(f32x4.abs(x), f32x4.splat(<f32>0.0004)));
}

/** tanh of n float32 at p (n a multiple of 4), in place. */
function tanhRow(p: usize, n: i32): void {
  for (let j: usize = 0; j < (<usize>n << 2); j += 16) v128.store(p + j, tanh4(v128.load(p + j)));
}

/** Subspaces a packed copy of the codebooks holds (pq.bytes: M); a table with more is summed from the codebooks as stored. */
const PACK_SUBSPACES: i32 = 256;

/**
 * The codebooks packed for pqSum at pack (a thread's scratch): a 16-byte header (the codebooks'
 * address, M, K: packed once per table), then for each subspace j its 256 entries of 4 float32
 * (its widths[j] ≤ 4 coordinates, zeros after), 4 KB a subspace: the subspace summed over a
 * sentence's rows then reads 4 KB, not a line of each 448-byte codebook row. False (nothing
 * packed) when M is over PACK_SUBSPACES or a subspace is wider than 4.
 */
function packCodebooks(pack: usize, M: i32, widths: usize, codebooks: usize, K: i32): bool {
  if (M > PACK_SUBSPACES) return false;
  for (let j = 0; j < M; j++) if (load<i32>(widths + (<usize>j << 2)) > 4) return false;
  if (load<i32>(pack) == <i32>codebooks && load<i32>(pack, 4) == M && load<i32>(pack, 8) == K) return true;
  const kBytes = <usize>K << 2, lane = i32x4(0, 1, 2, 3);
  let o: usize = 0;
  for (let j = 0; j < M; j++) {
    const wj = load<i32>(widths + (<usize>j << 2));
    const keep = i32x4.lt_s(lane, i32x4.splat(wj));
    const to = pack + 16 + (<usize>j << 12);
    for (let c: usize = 0; c < 256; c++) {
      // the last subspace's 4 floats may run past the codebooks: within the memory, and masked off
      v128.store(to + (c << 4), v128.and(v128.load(codebooks + c * kBytes + (o << 2)), keep));
    }
    o += <usize>wj;
  }
  store<i32>(pack, <i32>codebooks);
  store<i32>(pack, M, 4);
  store<i32>(pack, K, 8);
  return true;
}

/**
 * The sum of a sentence's n product-quantised rows as coordinates, times w, into z (K float32):
 * rows[0..n) hold the rows' addresses (codes + id · M). One subspace at a time over all rows, its
 * sum in registers: from the packed codebooks (packCodebooks; pack 0: none), else reading 4 floats
 * of each codebook entry as stored (those past the subspace's width belong to the next subspace
 * or lie beyond the table) for a subspace of at most 4 coordinates, and through memory for a wider
 * one. The 4 lanes are stored at the subspace's offset, in increasing order, so the next subspace
 * overwrites the extra lanes (z has room for 4 past K).
 */
function pqSum(rows: usize, n: i32, M: i32, widths: usize, codebooks: usize, kBytes: usize, pack: usize, w: f32, z: usize): void {
  const end = <usize>n << 2, end4 = <usize>(n & ~3) << 2, ws = f32x4.splat(w);
  let o: usize = 0;
  for (let j = 0; j < M; j++) {
    const wj = <usize>load<i32>(widths + (<usize>j << 2));
    const zo = z + (o << 2), jj = <usize>j;
    // entry c of subspace j at cb + c · stride
    const packed = pack != 0;
    const cb = packed ? pack + 16 + (jj << 12) : codebooks + (o << 2), stride = packed ? <usize>16 : kBytes;
    if (wj <= 4) {
      let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
      let k: usize = 0;
      for (; k < end4; k += 16) {
        const r = rows + k;
        a0 = f32x4.add(a0, v128.load(cb + <usize>load<u8>(<usize>load<i32>(r) + jj) * stride));
        a1 = f32x4.add(a1, v128.load(cb + <usize>load<u8>(<usize>load<i32>(r, 4) + jj) * stride));
        a2 = f32x4.add(a2, v128.load(cb + <usize>load<u8>(<usize>load<i32>(r, 8) + jj) * stride));
        a3 = f32x4.add(a3, v128.load(cb + <usize>load<u8>(<usize>load<i32>(r, 12) + jj) * stride));
      }
      for (; k < end; k += 4) a0 = f32x4.add(a0, v128.load(cb + <usize>load<u8>(<usize>load<i32>(rows + k) + jj) * stride));
      v128.store(zo, f32x4.mul(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), ws));
    } else {
      memory.fill(zo, 0, wj << 2);
      for (let k: usize = 0; k < end; k += 4) {
        const c = cb + <usize>load<u8>(<usize>load<i32>(rows + k) + jj) * kBytes;
        for (let t: usize = 0; t < wj; t++) store<f32>(zo + (t << 2), load<f32>(zo + (t << 2)) + load<f32>(c + (t << 2)));
      }
      for (let t: usize = 0; t < wj; t++) store<f32>(zo + (t << 2), load<f32>(zo + (t << 2)) * w);
    }
    o += wj;
  }
}

/**
 * embedBatch for a product-quantised table (xling export --dtype pq; src/io/pq-layout.ts): each
 * row is M bytes, byte j naming a centroid of subspace j (widths[j] coordinates at codebook columns
 * off_j …, codebooks [256, K] float32). A sentence's rows are summed as coordinates times w =
 * float32(1/n) into its row of Z (pqSum; K a multiple of 4), then h = tanh(mean + basis z) for the
 * batch at once (project: basis [fd, K]), then the projection as embedBatch. z: scratch of
 * (nb rounded up to 4) · K + 4 float32; pack: scratch for the packed codebooks (packCodebooks: 16
 * + PACK_SUBSPACES · 4096 bytes). The ids are overwritten with their rows' addresses.
 */
export function embedBatchPq(codes: usize, M: i32, widths: usize, codebooks: usize, K: i32, basis: usize, mean: usize, fd: i32, act: i32,
  W: usize, b: usize, d: i32, ids: usize, offs: usize, nb: i32, z: usize, pack: usize, h: usize, y: usize): void {
  const rowBytes = <usize>fd << 2, kBytes = <usize>K << 2;
  const packed = packCodebooks(pack, M, widths, codebooks, K) ? pack : 0;
  // every row's address, and a read of each (its first and last byte: a row may span two lines)
  // so that the memory system fetches them all at once before the sums wait on them
  const all = load<i32>(offs + (<usize>nb << 2));
  let x: i32 = 0;
  for (let k: usize = 0; k < (<usize>all << 2); k += 4) {
    const row = codes + <usize>load<i32>(ids + k) * <usize>M;
    store<i32>(ids + k, <i32>row);
    x ^= <i32>load<u8>(row) ^ <i32>load<u8>(row + <usize>M - 1);
  }
  store<i32>(z, x);
  for (let s = 0; s < nb; s++) {
    const a = load<i32>(offs + (<usize>s << 2)), e = load<i32>(offs + (<usize>(s + 1) << 2)), n = e - a;
    pqSum(ids + (<usize>a << 2), n, M, widths, codebooks, kBytes, packed, <f32>(1.0 / <f64>max(n, 1)), z + <usize>s * kBytes);
  }
  const padded = (nb + 3) & ~3;
  for (let s = nb; s < padded; s++) memory.fill(z + <usize>s * kBytes, 0, kBytes);
  project(basis, mean, fd, K, z, padded, h);
  if (act == 1) tanhRow(h, padded * fd);
  project(W, b, d, fd, h, padded, y);
}
