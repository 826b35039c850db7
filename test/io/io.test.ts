import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  readNpy,
  writeNpy,
  readNpyHeader,
  NpyRowReader,
  NpyRowWriter,
  NpyWriter,
  writeRawF32,
  readRawF32,
  type NpyArray,
  type NpyDType,
} from '../../src/io/npy.js';
import {
  writeSafetensors,
  readSafetensors,
  readSafetensorsHeader,
  rawFromArray,
  rawToArray,
  toSafetensorsDtype,
  fromSafetensorsDtype,
  type RawTensor,
} from '../../src/io/safetensors.js';
import { readLines } from '../../src/io/lines.js';
import { floatToHalfBits, halfBitsToFloat, float32ToFloat16, float16ToFloat32, floatToBf16Bits, bf16BitsToFloat } from '../../src/io/half.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xling-io-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const p = (name: string): string => path.join(tmp, name);
const noTemps = (): void => {
  assert.deepEqual(
    fs.readdirSync(tmp).filter((f) => f.includes('.tmp-')),
    [],
  );
};

// Known binary16 bit patterns.
const HALF_CASES: [number, number][] = [
  [0, 0x0000],
  [-0, 0x8000],
  [1, 0x3c00],
  [-2, 0xc000],
  [0.5, 0x3800],
  [65504, 0x7bff],
  [2 ** -14, 0x0400],
  [2 ** -24, 0x0001],
  [0.333251953125, 0x3555],
  [Infinity, 0x7c00],
  [-Infinity, 0xfc00],
  [1e6, 0x7c00],
  [1 + 2 ** -11, 0x3c00] /* tie → even */,
  [1 + 3 * 2 ** -11, 0x3c02] /* tie → even (up) */,
  [2 ** -26, 0x0000],
  [0.1, 0x2e66],
];

test('float16 conversions match known bit patterns', () => {
  for (const [v, bits] of HALF_CASES) {
    assert.equal(floatToHalfBits(v), bits, `floatToHalfBits(${v})`);
  }
  for (const [v, bits] of HALF_CASES.slice(0, 11)) {
    assert.ok(Object.is(halfBitsToFloat(bits), v), `halfBitsToFloat(0x${bits.toString(16)})`);
  }
  assert.ok(Number.isNaN(halfBitsToFloat(floatToHalfBits(NaN))));
  assert.equal(halfBitsToFloat(0x2e66), 0.0999755859375);
  // every finite half round-trips exactly
  for (let h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) === 0x7c00) continue;
    assert.equal(floatToHalfBits(halfBitsToFloat(h)), h);
  }
  assert.equal(floatToBf16Bits(1), 0x3f80);
  assert.equal(floatToBf16Bits(-2.5), 0xc020);
  assert.equal(bf16BitsToFloat(0x3f80), 1);
  assert.equal(bf16BitsToFloat(floatToBf16Bits(3.140625)), 3.140625);
});

test('npy round trip for every dtype', () => {
  const cases: [NpyDType, NpyArray, number[]][] = [
    ['float32', Float32Array.from([1.5, -2, 3.25, 0, 1e-8, 7]), [2, 3]],
    ['float64', Float64Array.from([Math.PI, -1e300, 0.1]), [3]],
    ['float16', Uint16Array.from([0x3c00, 0xc000, 0x3555, 0x7bff]), [2, 2]],
    ['int64', BigInt64Array.from([0n, -1n, 9007199254740993n, -(2n ** 63n)]), [4, 1]],
    ['int32', Int32Array.from([1, -2, 2147483647, -2147483648]), [2, 2]],
    ['int16', Int16Array.from([-32768, 32767]), [2]],
    ['int8', Int8Array.from([-128, 127, 0]), [3]],
    ['uint8', Uint8Array.from([0, 255, 17, 3, 4, 5]), [1, 2, 3]],
    ['bool', Uint8Array.from([1, 0, 1]), [3]],
    ['float32', new Float32Array(0), [0, 4]],
    ['float32', Float32Array.from([42]), []],
  ];
  for (const [dtype, data, shape] of cases) {
    const f = p(`rt-${dtype}-${shape.join('x')}.npy`);
    writeNpy(f, data, shape, dtype);
    const r = readNpy(f);
    assert.equal(r.dtype, dtype);
    assert.deepEqual(r.shape, shape);
    assert.equal(r.data.constructor, data.constructor);
    assert.deepEqual(Array.from(r.data as ArrayLike<number | bigint>), Array.from(data as ArrayLike<number | bigint>));
    const h = readNpyHeader(f);
    assert.equal(h.headerBytes % 64, 0);
    assert.equal(fs.statSync(f).size, h.headerBytes + data.byteLength);
  }
  noTemps();
});

test('npy header bytes are exactly what numpy writes', () => {
  const f = p('hdr.npy');
  writeNpy(f, new Float32Array(6), [2, 3]);
  const buf = fs.readFileSync(f);
  assert.deepEqual([...buf.subarray(0, 8)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  assert.equal(buf.readUInt16LE(8), 118);
  const dict = buf.subarray(10, 128).toString('latin1');
  assert.ok(dict.startsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  assert.ok(dict.endsWith(' \n'));
  writeNpy(f, new Float32Array(5), [5]);
  assert.match(fs.readFileSync(f).toString('latin1', 10, 80), /'shape': \(5,\)/);
});

test('npy reads v2.0 headers and rejects bad files with clear errors', () => {
  // v2.0 hand-built
  const dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  const total = Math.ceil((12 + dict.length + 1) / 64) * 64;
  const hdr = Buffer.alloc(total, 0x20);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0]).copy(hdr);
  hdr.writeUInt32LE(total - 12, 8);
  hdr.write(dict, 12, 'latin1');
  hdr[total - 1] = 0x0a;
  const body = Buffer.from(Int32Array.from([7, 8, 9]).buffer);
  fs.writeFileSync(p('v2.npy'), Buffer.concat([hdr, body]));
  const r = readNpy(p('v2.npy'));
  assert.deepEqual([...(r.data as Int32Array)], [7, 8, 9]);
  assert.deepEqual(readNpyHeader(p('v2.npy')).version, [2, 0]);

  fs.writeFileSync(p('bad.npy'), 'hello world, not numpy');
  assert.throws(() => readNpy(p('bad.npy')), /bad\.npy: not a \.npy file \(bad magic/);

  fs.writeFileSync(p('trunc.npy'), Buffer.concat([hdr, body.subarray(0, 8)]));
  assert.throws(() => readNpy(p('trunc.npy')), /trunc\.npy: truncated data.*needs 12 bytes, file has 8/);
  assert.throws(() => NpyRowReader.open(p('trunc.npy')), /trunc\.npy: truncated data/);

  const mk = (d: string): Buffer => {
    const h = Buffer.from(hdr);
    h.write(d.padEnd(total - 13, ' '), 12, 'latin1');
    return Buffer.concat([h, body]);
  };
  fs.writeFileSync(p('fort.npy'), mk("{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }"));
  assert.throws(() => readNpy(p('fort.npy')), /fort\.npy: fortran_order=True arrays are not supported/);
  fs.writeFileSync(p('cplx.npy'), mk("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }"));
  assert.throws(() => readNpy(p('cplx.npy')), /cplx\.npy: unsupported dtype '<c8'/);
  fs.writeFileSync(p('be.npy'), mk("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }"));
  assert.throws(() => readNpy(p('be.npy')), /be\.npy: unsupported dtype '>i4' \(big-endian/);

  assert.throws(() => writeNpy(p('mm.npy'), new Float32Array(5), [2, 3]), /mm\.npy: shape \[2, 3\] has 6 elements but the data has 5/);
  assert.throws(() => writeNpy(p('mm.npy'), new Float32Array(6), [2, 3], 'int32'), /does not match dtype int32/);
  assert.ok(!fs.existsSync(p('mm.npy')));
  noTemps();
});

test('NpyRowReader reads row ranges without loading the file', () => {
  const rows = 1000;
  const cols = 7;
  const data = new Float32Array(rows * cols).map((_, i) => i * 0.5);
  writeNpy(p('big.npy'), data, [rows, cols]);
  const r = NpyRowReader.open(p('big.npy'));
  assert.equal(r.rows, rows);
  assert.equal(r.cols, cols);
  assert.equal(r.dtype, 'float32');
  assert.deepEqual([...r.readRows(10, 12)], [...data.subarray(70, 84)]);
  const buf = new Float32Array(100 * cols);
  const view = r.readRows(995, 1000, buf);
  assert.equal(view.buffer, buf.buffer);
  assert.deepEqual([...view], [...data.subarray(995 * cols)]);
  assert.equal(r.readRows(5, 5).length, 0);
  let seen = 0;
  for (const b of r.blocks(300)) {
    assert.deepEqual([...b.data], [...data.subarray(b.start * cols, b.end * cols)]);
    seen += b.end - b.start;
  }
  assert.equal(seen, rows);
  assert.throws(() => r.readRows(999, 1001), /row range \[999, 1001\) out of bounds \(rows: 1000\)/);
  r.close();
  assert.throws(() => r.readRows(0, 1), /closed/);

  // float16 and float64 sources are converted to float32
  const h = float32ToFloat16([1, 0.5, -3, 65504]);
  writeNpy(p('h.npy'), h, [2, 2]);
  const rh = NpyRowReader.open(p('h.npy'));
  assert.deepEqual([...rh.readRows(1, 2)], [-3, 65504]);
  assert.deepEqual([...(rh.readRowsRaw(0, 1) as Uint16Array)], [0x3c00, 0x3800]);
  rh.close();
  writeNpy(p('d.npy'), Float64Array.from([1, 2, 3, 4, 5, 6]), [3, 2]);
  const rd = NpyRowReader.open(p('d.npy'));
  assert.deepEqual([...rd.readRows(1, 3)], [3, 4, 5, 6]);
  rd.close();
});

test('NpyWriter streams rows and patches the header', () => {
  const f = p('stream.npy');
  const w = NpyWriter.open(f, 3);
  assert.ok(!fs.existsSync(f), 'no final file before close');
  assert.ok(fs.existsSync(w.tmpPath));
  w.append(Float32Array.from([1, 2, 3]));
  w.append(Float32Array.from([4, 5, 6, 7, 8, 9]));
  w.append(new Float32Array(0));
  assert.throws(() => w.append(Float32Array.from([1, 2])), /not a whole number of rows of 3/);
  assert.throws(() => w.append(Int32Array.from([1, 2, 3])), /does not match dtype float32/);
  assert.equal(w.rows, 3);
  w.close();
  assert.ok(!fs.existsSync(w.tmpPath));
  const r = readNpy(f);
  assert.deepEqual(r.shape, [3, 3]);
  assert.deepEqual([...(r.data as Float32Array)], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.throws(() => w.close(), /already closed/);

  // zero rows, N-D row shape, other dtype
  const w0 = NpyWriter.open(p('empty.npy'), [2, 2], 'int64');
  w0.close();
  assert.deepEqual(readNpy(p('empty.npy')).shape, [0, 2, 2]);

  // abort leaves nothing
  const wa = NpyWriter.open(p('aborted.npy'), 4);
  wa.append(new Float32Array(8));
  wa.abort();
  assert.ok(!fs.existsSync(p('aborted.npy')));
  noTemps();
});

test('NpyWriter: a killed process leaves no final file', async () => {
  const { spawnSync } = await import('node:child_process');
  const npyUrl = new URL('../../src/io/npy.js', import.meta.url).href;
  const f = p('killed.npy');
  const script = `import { NpyWriter } from ${JSON.stringify(npyUrl)};
    const w = NpyWriter.open(${JSON.stringify(f)}, 4);
    w.append(new Float32Array(400));
    process.kill(process.pid, 'SIGKILL');`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script]);
  assert.equal(res.signal, 'SIGKILL');
  assert.ok(!fs.existsSync(f));
  for (const t of fs.readdirSync(tmp).filter((n) => n.startsWith('killed.npy.tmp-'))) fs.unlinkSync(path.join(tmp, t));
});

test('NpyRowWriter fills row ranges of a preallocated file in any order', () => {
  const f = p('rows.npy');
  NpyRowWriter.create(f, 5, 3, 'float32');
  const w = NpyRowWriter.open(f);
  w.write(3, new Float32Array([9, 10, 11, 12, 13, 14]));
  w.write(0, new Float32Array([0, 1, 2, 3, 4, 5, 6, 7, 8]));
  assert.throws(() => w.write(4, new Float32Array(6)), /rows 4\.\.6 outside its 5 rows/);
  assert.throws(() => w.write(0, new Float32Array(4)), /not a whole number of rows of 3/);
  assert.throws(() => w.write(0, new Uint16Array(3)), /does not match dtype float32/);
  w.close();
  const r = readNpy(f);
  assert.deepEqual(r.shape, [5, 3]);
  assert.deepEqual(
    [...(r.data as Float32Array)],
    Array.from({ length: 15 }, (_, i) => i),
  );
  NpyRowWriter.create(p('rows16.npy'), 2, 2, 'float16');
  const h = NpyRowWriter.open(p('rows16.npy'));
  h.write(1, float32ToFloat16([1, 2]));
  h.close();
  assert.deepEqual([...float16ToFloat32(readNpy(p('rows16.npy')).data as Uint16Array)], [0, 0, 1, 2]);
});

test("readLines gives each line's byte offset, and starts at one", async () => {
  const f = p('lines.txt');
  fs.writeFileSync(f, '\ufeffé one\r\ntwo\n\nfour ü\nfive');
  const all = [];
  for await (const l of readLines(f)) all.push(l);
  assert.deepEqual(
    all.map((l) => l.line),
    ['é one', 'two', '', 'four ü', 'five'],
  );
  assert.deepEqual(
    all.map((l) => l.offset),
    [0, 11, 15, 16, 24],
  ); // BOM 3 + 'é one' 6 + CRLF; é and ü are 2 bytes
  const tail = [];
  for await (const l of readLines(f, { startByte: 15, firstLine: 3 })) tail.push(l);
  assert.deepEqual(tail, all.slice(2));
  // gzip is known by its magic bytes (not the name): a gzip stream has no byte offsets to start at
  fs.writeFileSync(p('lines.gz-by-bytes'), gzipSync('one\ntwo\n'));
  await assert.rejects(async () => {
    for await (const _ of readLines(p('lines.gz-by-bytes'), { startByte: 3 })) {
      /* */
    }
  }, /cannot be read from a byte offset/);
});

test('readLines cuts a line longer than maxChars (never an error): its rest is skipped unread, the count said once, offsets kept', async () => {
  const f = p('long-lines.txt');
  // a line of 3 MB crosses the reader's 1 MB chunks; one of 'é' (2 bytes a character) is cut inside none of them
  const big = 'x'.repeat(3 << 20),
    accents = 'é'.repeat(3000);
  fs.writeFileSync(
    f,
    `short
${big}
middle
${accents}
${'y'.repeat(1000)}
last`,
  );
  const cut: number[] = [];
  const all = [];
  for await (const l of readLines(f, { maxChars: 1000, onCut: (k) => cut.push(k) })) all.push(l);
  assert.deepEqual(
    all.map((l) => l.line),
    ['short', 'x'.repeat(1000), 'middle', 'é'.repeat(1000), 'y'.repeat(1000), 'last'],
  );
  assert.deepEqual(cut, [2], 'the 3 MB line and the accented one (a line of exactly maxChars is not cut)');
  assert.deepEqual(
    all.map((l) => l.offset),
    [0, 6, 7 + big.length, 14 + big.length, 15 + big.length + 6000, 16 + big.length + 7000],
  );
  // without onCut: one warning on stderr naming the file and the count
  const errWrite = process.stderr.write;
  let said = '';
  process.stderr.write = ((c: string) => {
    said += c;
    return true;
  }) as typeof process.stderr.write;
  try {
    for await (const _ of readLines(f, { maxChars: 1000 })) {
      /* */
    }
  } finally {
    process.stderr.write = errWrite;
  }
  assert.equal(said, `[xling] warning: ${f}: 2 lines longer than 1000 characters were cut to 1000\n`);
  // invalid bytes in the part of a line that is read are still refused, naming the line
  fs.writeFileSync(p('long-bad.txt'), Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xff]), Buffer.from('z'.repeat(5000))]));
  await assert.rejects(async () => {
    for await (const _ of readLines(p('long-bad.txt'), { maxChars: 1000 })) {
      /* */
    }
  }, /long-bad\.txt:2: invalid UTF-8/);
});

test('raw float32 (LASER) files', () => {
  const data = Float32Array.from({ length: 12 }, (_, i) => i - 5.5);
  writeRawF32(p('emb.raw'), data);
  assert.equal(fs.statSync(p('emb.raw')).size, 48);
  const r = readRawF32(p('emb.raw'), 4);
  assert.equal(r.rows, 3);
  assert.equal(r.cols, 4);
  assert.deepEqual([...r.data], [...data]);
  assert.throws(() => readRawF32(p('emb.raw'), 5), /emb\.raw: size 48 bytes is not a multiple of 20/);
  const rr = NpyRowReader.openRawF32(p('emb.raw'), 4);
  assert.deepEqual([...rr.readRows(2, 3)], [2.5, 3.5, 4.5, 5.5]);
  rr.close();
});

test('safetensors round trip for every dtype, with metadata', () => {
  const f = p('m.safetensors');
  const half = float32ToFloat16([1, -2, 0.333251953125, 65504]);
  assert.deepEqual([...half], [0x3c00, 0xc000, 0x3555, 0x7bff]);
  const tensors: Record<string, RawTensor> = {
    'enc.weight': rawFromArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]),
    'enc.half': rawFromArray(half, [4]),
    'enc.bf16': rawFromArray(Uint16Array.from([0x3f80, 0xc020]), [2], 'bfloat16'),
    ids: rawFromArray(BigInt64Array.from([1n, -2n, 2n ** 40n]), [3]),
    i32: rawFromArray(Int32Array.from([-7, 7]), [1, 2]),
    bytes: rawFromArray(Uint8Array.from([9, 8, 7]), [3]),
    mask: rawFromArray(Uint8Array.from([1, 0]), [2], 'BOOL'),
    f64: rawFromArray(Float64Array.from([Math.E]), []),
    empty: rawFromArray(new Float32Array(0), [0, 5]),
  };
  writeSafetensors(f, tensors, { format: 'pt', note: 'ünïcödé "quoted"' });
  noTemps();
  const buf = fs.readFileSync(f);
  const n = Number(buf.readBigUInt64LE(0));
  assert.equal(n % 8, 0, 'header padded to a multiple of 8');
  const hdr = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  assert.deepEqual(hdr.__metadata__, { format: 'pt', note: 'ünïcödé "quoted"' });
  assert.deepEqual(hdr['enc.weight'], { dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] });
  assert.deepEqual(hdr['enc.half'], { dtype: 'F16', shape: [4], data_offsets: [24, 32] });
  assert.equal(buf.length, 8 + n + 24 + 8 + 4 + 24 + 8 + 3 + 2 + 8);

  const r = readSafetensors(f);
  assert.deepEqual(r.metadata, { format: 'pt', note: 'ünïcödé "quoted"' });
  assert.deepEqual(Object.keys(r.tensors), Object.keys(tensors));
  assert.equal(r.tensors['enc.bf16']!.dtype, 'BF16');
  for (const [k, t] of Object.entries(tensors)) {
    const got = r.tensors[k]!;
    assert.equal(got.dtype, toSafetensorsDtype(t.dtype));
    assert.deepEqual(got.shape, t.shape);
    assert.deepEqual([...got.data], [...t.data], k);
  }
  const w = rawToArray(r.tensors['enc.weight']!);
  assert.ok(w instanceof Float32Array);
  assert.deepEqual([...w], [1, 2, 3, 4, 5, 6]);
  const h = rawToArray(r.tensors['enc.half']!) as Uint16Array;
  assert.deepEqual([...float16ToFloat32(h)], [1, -2, 0.333251953125, 65504]);
  assert.deepEqual([...(rawToArray(r.tensors.ids!) as BigInt64Array)], [1n, -2n, 2n ** 40n]);
  // misaligned view is copied, not mis-read
  const shifted = new Uint8Array(5);
  shifted.set(new Uint8Array(Float32Array.from([2.5]).buffer), 1);
  const odd = rawToArray({ dtype: 'F32', shape: [1], data: shifted.subarray(1) });
  assert.ok(odd instanceof Float32Array);
  assert.equal(odd[0], 2.5);

  const sub = readSafetensors(f, { names: ['ids'] });
  assert.deepEqual(Object.keys(sub.tensors), ['ids']);
  assert.throws(() => readSafetensors(f, { names: ['nope'] }), /no tensor named 'nope'/);
  const hh = readSafetensorsHeader(f);
  assert.deepEqual(hh.entries.i32, { dtype: 'I32', shape: [1, 2], dataOffsets: [60, 68] });
  assert.equal(hh.dataStart, 8 + n);
  assert.equal(fromSafetensorsDtype('F16'), 'float16');
  assert.equal(toSafetensorsDtype('int64'), 'I64');
});

test('safetensors validation errors', () => {
  const mk = (header: unknown, data: number, name: string, pad = true): string => {
    let j = Buffer.from(JSON.stringify(header));
    if (pad) j = Buffer.concat([j, Buffer.alloc((8 - (j.length % 8)) % 8, 0x20)]);
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(j.length));
    const f = p(name);
    fs.writeFileSync(f, Buffer.concat([len, j, Buffer.alloc(data)]));
    return f;
  };
  assert.throws(() => readSafetensors(mk({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, 4, 'trunc.st')), /trunc\.st: tensor 'a': truncated data/);
  assert.throws(
    () => readSafetensors(mk({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, 8, 'len.st')),
    /len\.st: tensor 'a': data_offsets \[0, 8\] span 8 bytes but shape \[3\] F32 needs 12/,
  );
  assert.throws(
    () => readSafetensors(mk({ a: { dtype: 'C64', shape: [1], data_offsets: [0, 8] } }, 8, 'dt.st')),
    /dt\.st: tensor 'a': unsupported dtype "C64"/,
  );
  assert.throws(
    () =>
      readSafetensors(
        mk(
          {
            a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
            b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] },
          },
          8,
          'ov.st',
        ),
      ),
    /ov\.st: tensor 'b'.*overlap/,
  );
  assert.throws(
    () => readSafetensors(mk({ a: { dtype: 'U8', shape: [1], data_offsets: [1, 2] } }, 2, 'hole.st')),
    /hole\.st: hole in the byte buffer before tensor 'a'/,
  );
  assert.throws(() => readSafetensors(mk({ a: { dtype: 'U8', shape: [1], data_offsets: [0, 1] } }, 3, 'trail.st')), /trail\.st: 2 unexpected trailing bytes/);
  assert.throws(() => readSafetensors(mk({ __metadata__: { a: 1 } }, 0, 'meta.st')), /meta\.st: __metadata__\['a'\] must be a string/);
  fs.writeFileSync(p('tiny.st'), Buffer.alloc(3));
  assert.throws(() => readSafetensors(p('tiny.st')), /tiny\.st: not a safetensors file/);
  const big = Buffer.alloc(16);
  big.writeBigUInt64LE(1000n);
  fs.writeFileSync(p('hl.st'), big);
  assert.throws(() => readSafetensors(p('hl.st')), /hl\.st: truncated safetensors header/);
  const junk = Buffer.alloc(16, 0x41);
  junk.writeBigUInt64LE(8n);
  fs.writeFileSync(p('json.st'), junk);
  assert.throws(() => readSafetensors(p('json.st')), /json\.st: not a safetensors file \(header does not start with '\{'\)/);
  // unpadded headers from other writers are accepted
  const ok = mk({ a: { dtype: 'U8', shape: [2], data_offsets: [0, 2] } }, 2, 'unpadded.st', false);
  assert.deepEqual(readSafetensors(ok).tensors.a!.shape, [2]);

  assert.throws(
    () => writeSafetensors(p('w.st'), { a: { dtype: 'F32', shape: [2], data: new Uint8Array(7) } }),
    /w\.st: tensor 'a': shape \[2\] F32 needs 8 bytes, data has 7/,
  );
  assert.throws(() => writeSafetensors(p('w.st'), { a: { dtype: 'X9', shape: [2], data: new Uint8Array(8) } }), /unsupported safetensors dtype 'X9'/);
  assert.throws(() => writeSafetensors(p('w.st'), { __metadata__: { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }), /reserved/);
  assert.ok(!fs.existsSync(p('w.st')));
  noTemps();
});

test('joinRows: each float32 as the shortest decimal that reads back as itself, around the given parts', async () => {
  const { joinRows, jsonArrayOfRows } = await import('../../src/io/json.js');
  const v = Float32Array.from([0.1, -0.25, 1e-8, 3.4028234663852886e38, 1 / 3, NaN, Infinity, 0]);
  const text = jsonArrayOfRows(v, 4).toString('utf8');
  assert.equal(text, '[[0.1,-0.25,1e-08,3.4028235e+38],[0.33333334,null,null,0]]');
  const back = (JSON.parse(text) as (number | null)[][]).flat();
  v.forEach((x, i) => assert.equal(back[i] === null ? null : Math.fround(back[i]!), Number.isFinite(x) ? x : null, `[${i}]`));
  // random values survive the round trip exactly
  const r = Float32Array.from({ length: 512 * 3 }, (_, i) => Math.sin(i * 12.9898) * 10 ** ((i % 13) - 6));
  const again = (JSON.parse(jsonArrayOfRows(r, 512).toString()) as number[][]).flat();
  r.forEach((x, i) => assert.equal(Math.fround(again[i]!), x));
  assert.equal(joinRows(Float32Array.from([1, 2]), 1, ['{"a":', ',"ü":', '}']).toString(), '{"a":[1],"ü":[2]}');
  assert.equal(jsonArrayOfRows(new Float32Array(0), 4).toString(), '[]');
  assert.throws(() => joinRows(Float32Array.from([1, 2, 3]), 2, ['', '']), /not whole rows/);
  assert.throws(() => joinRows(Float32Array.from([1, 2]), 2, ['']), /rows \+ 1 strings/);
  assert.throws(() => joinRows(Float32Array.from([1, 2]), 2, ['', 3 as unknown as string]), /parts\[1\] is not a string/);
});

test('jsonLinesOfRows (no addon): each float32 as the shortest decimal that reads back as itself, one row a line', async () => {
  const { jsonLinesOfRows } = await import('../../src/io/json.js');
  const { float32Text: float32Json } = await import('../../src/util/float-text.js');
  const v = Float32Array.from([0.1, 1 / 3, -0.5, 0, 1e-7, 3.4e38, 1.4e-45, 123456.7, Number.NaN, Infinity, -2, 0.25]);
  assert.equal(jsonLinesOfRows(v, 4).toString(), '[0.1,0.33333334,-0.5,0]\n[1e-07,3.4e+38,1e-45,123456.7]\n[null,null,-2,0.25]\n');
  const r = new Float32Array(4096);
  for (let i = 0; i < r.length; i++) r[i] = Math.fround(Math.sin(i * 12.9898) * 43758.5453) / 10 ** (i % 40);
  for (const x of r) {
    const s = float32Json(x);
    assert.equal(Math.fround(Number(s)), x, s);
    // nothing shorter reads back as x
    const digits = s.replace(/^-|e.*$|\./g, '').replace(/^0+/, '').length;
    if (digits > 1) assert.notEqual(Math.fround(Number(x.toPrecision(digits - 1))), x, s);
  }
});
