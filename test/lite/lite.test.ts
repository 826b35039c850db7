// xling/lite: the runtime without native code gives xling embed's vectors (fp32 exports ≤ 1e-6,
// int8 within the quantisation error), tokenises as the native path on every language of the dev
// set, loads a directory, a single file and a URL, runs on worker threads, and imports and embeds
// in a process where the addon cannot load.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { exportCompact } from '../../src/embed/export.js';
import { exportEncoder, loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { loadModel } from '../../src/lite/index.js';
import { root, tinyDualModel } from '../fixtures/cli.js';

const maxDiff = (a: Float32Array, b: Float32Array) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

/** Columns of an N-way TSV(.gz): language → sentences (the first `rows` rows). */
function columns(file: string, rows = Infinity): Map<string, string[]> {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean);
  const langs = lines[0]!.split('\t');
  const out = new Map<string, string[]>(langs.map((l) => [l, []]));
  for (const line of lines.slice(1, 1 + Math.min(rows, lines.length)))
    line.split('\t').forEach((c, i) => {
      if (c) out.get(langs[i]!)?.push(c);
    });
  return out;
}

describe('xling/lite', () => {
  let dir = '',
    model = '',
    fp32 = '',
    int8 = '',
    pruned = '';
  const dev = columns(join(root, 'data/sample/gettext.dev.tsv.gz'), 80);
  const sents = [...dev.get('de')!, ...dev.get('ja')!, ...dev.get('ru')!, '', '   ', 'Ünïcödé “quotes” — dash… ﬁ ＡＢＣ'];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xling-lite-'));
    model = join(dir, 'tiny');
    tinyDualModel(dir, model, { features: { buckets: 65536, dim: 32 } });
    fp32 = join(dir, 'fp32');
    exportEncoder(model, fp32);
    int8 = join(dir, 'int8');
    exportCompact(model, int8, { dtype: 'int8' });
    pruned = join(dir, 'pruned');
    exportCompact(model, pruned, { dtype: 'int8', prune: true, fallback: 64 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('embeds as xling embed: fp32 ≤ 1e-6, int8 and pruned int8 as their native loads and within the quantisation error', async () => {
    const native = loadSentenceEncoder(fp32);
    const lite = await loadModel(fp32);
    assert.equal(lite.dim, native.dim);
    assert.equal(lite.dtype, 'fp32');
    /**
     * Lite vs native, plain and centred: ≤ 1e-6, where centring divides by |v − μ| and so multiplies
     * the float32 rounding of the native path (~1e-7) by 1 / min |v − μ| (tiny for a sentence near the mean).
     */
    const parity = async (m: typeof lite, n: typeof native, what: string) => {
      const plain = n.embed(sents, { center: false });
      assert.ok(maxDiff(await m.embed(sents, { lang: null }), plain) <= 1e-6, what);
      for (const lang of ['de', 'ja']) {
        const mu = n.centers.get(lang)!;
        let minNorm = Infinity;
        for (let i = 0; i < sents.length; i++)
          minNorm = Math.min(minNorm, Math.hypot(...Array.from({ length: n.dim }, (_, j) => plain[i * n.dim + j]! - mu[j]!)));
        const d = maxDiff(await m.embed(sents, { lang }), n.embed(sents, { lang }));
        console.log(`# ${what}, lang ${lang}: max |Δ| ${d.toExponential(2)} (min |v − μ| ${minNorm.toFixed(3)})`);
        assert.ok(d <= 1e-6 / Math.min(1, minNorm), `${what}, lang ${lang}: ${d}`);
      }
    };
    await parity(lite, native, 'fp32');
    const ref = native.embed(sents, { lang: 'de' });
    for (const dir8 of [int8, pruned]) {
      const l8 = await loadModel(dir8),
        n8 = loadSentenceEncoder(dir8);
      assert.equal(l8.dtype, 'int8');
      await parity(l8, n8, dir8 === int8 ? 'int8' : 'pruned int8');
      const v = await l8.embed(sents, { lang: 'de' });
      // int8 alone: within the quantisation error of the rows (pruning also changes unseen n-grams' rows)
      const q = maxDiff(v, ref);
      if (dir8 === int8) assert.ok(q > 0 && q < 3e-2, `${dir8} vs fp32: ${q}`);
    }
    // unit rows
    const v = await lite.embed(['a', 'b c'], { lang: 'de' });
    for (let i = 0; i < 2; i++) assert.ok(Math.abs(Math.hypot(...v.subarray(i * lite.dim, (i + 1) * lite.dim)) - 1) < 1e-5);
    await assert.rejects(lite.embed(['x'], { lang: 'xx' }), /no mean vector for lang 'xx'/);
    assert.equal((await lite.embed([])).length, 0);
  });

  it('a product-quantised export (--dtype pq): lite sums the rows as coordinates (WebAssembly and TypeScript) and embeds as the native read-back (≤ 1e-5)', async () => {
    const pq = join(dir, 'pq');
    exportCompact(model, pq, { dtype: 'pq', pqBytes: 8, pqDims: 20 });
    const native = loadSentenceEncoder(pq),
      lite = await loadModel(pq),
      single = await loadModel(join(pq, 'model.safetensors'));
    const js = await loadModel(pq, { kernel: 'js' });
    assert.equal(lite.dtype, 'pq');
    // the WebAssembly kernel (embedBatchPq) where the engine has SIMD, the pure-TypeScript path on request
    assert.deepEqual([lite.kernel, js.kernel], ['wasm-simd', 'js']);
    for (const [m, lang] of [
      [lite, null],
      [lite, 'ja'],
      [single, 'de'],
      [js, null],
      [js, 'ja'],
    ] as const) {
      const d = maxDiff(await m.embed(sents, { lang }), native.embed(sents, lang ? { lang } : { center: false }));
      console.log(`# pq (${m.kernel}), lang ${lang}: max |Δ| ${d.toExponential(2)}`);
      assert.ok(d <= 1e-5, `pq (${m.kernel}), lang ${lang}: ${d}`);
    }
    const pool = await loadModel(pq, { threads: 2 });
    try {
      assert.deepEqual(Array.from(await pool.embed(sents, { lang: null })), Array.from(await lite.embed(sents, { lang: null })));
    } finally {
      await pool.close();
    }
  });

  it("lang 'auto' (the default) and 'auto-per-sentence' centre as the native path: the same identified language, the same vectors", async () => {
    const native = loadSentenceEncoder(fp32),
      lite = await loadModel(fp32),
      pool = await loadModel(fp32, { threads: 2 });
    assert.ok(native.lid, 'the model has a language identifier');
    try {
      for (const lang of ['de', 'ja', 'ru']) {
        const col = dev.get(lang)!;
        for (const center of [undefined, 'force'] as const) {
          const ref = native.embed(col, { lang: 'auto', center });
          assert.ok(maxDiff(await lite.embed(col, { center }), ref) <= 1e-5, `${lang} auto, center ${center}`);
          assert.ok(maxDiff(await pool.embed(col, { lang: 'auto', center }), ref) <= 1e-5, `${lang} auto on 2 threads, center ${center}`);
        }
        // forced, the identified language's mean is really subtracted
        assert.ok(
          maxDiff(native.embed(col, { lang: 'auto', center: 'force' }), native.embed(col, { center: false })) > 1e-3,
          `${lang}: centring changes the vectors`,
        );
      }
      // mixed input, each sentence identified on its own (on 2 threads too: the plan is made over the whole input)
      const mixed = [...dev.get('de')!.slice(0, 40), ...dev.get('ja')!.slice(0, 40), ...dev.get('ru')!.slice(0, 60), '', '  '];
      const ref = native.embed(mixed, { lang: 'auto-per-sentence', center: 'force' });
      assert.ok(maxDiff(await lite.embed(mixed, { lang: 'auto-per-sentence', center: 'force' }), ref) <= 1e-5);
      assert.ok(maxDiff(await pool.embed(mixed, { lang: 'auto-per-sentence', center: 'force' }), ref) <= 1e-5);
    } finally {
      await pool.close();
    }
  });

  it('tokenises every language of the shared dev set as the native tokenizer', async () => {
    const file = resolve(root, '..', 'shared/data/gettext/dev.tsv.gz');
    const cols = existsSync(file) ? columns(file, 400) : columns(join(root, 'data/sample/gettext.dev.tsv.gz'));
    if (existsSync(file)) assert.equal(cols.size, 40);
    const native = loadSentenceEncoder(int8).tokenizer,
      lite = await loadModel(int8);
    let n = 0;
    for (const [lang, col] of cols)
      for (const s of col) {
        const a = lite.tokenize(s),
          b = native.encode(s);
        if (a.length !== b.length || a.some((x, i) => x !== b[i])) assert.fail(`${lang}: '${s}' tokenised differently`);
        n++;
      }
    console.log(`# ${n} sentences of ${cols.size} languages tokenised alike`);
  });

  it('hash embeddings (features.hashes 2): the spec records them; lite tokenises and embeds as the native path, fp32 and int8', async () => {
    const h2 = join(dir, 'h2');
    tinyDualModel(dir, h2, { features: { buckets: 65536, dim: 32, hashes: 2, maxFeatures: 4096 } });
    const cfg = JSON.parse(readFileSync(join(h2, 'config.json'), 'utf8')) as { tokenizerSpec: { hashes?: number } };
    assert.equal(cfg.tokenizerSpec.hashes, 2);
    const f32 = join(dir, 'h2-fp32'),
      i8 = join(dir, 'h2-int8');
    exportEncoder(h2, f32);
    exportCompact(h2, i8, { dtype: 'int8' });
    for (const d of [f32, i8]) {
      const native = loadSentenceEncoder(d),
        lite = await loadModel(d);
      for (const s of sents) {
        const a = lite.tokenize(s),
          b = native.tokenizer.encode(s);
        assert.deepEqual(Array.from(a), Array.from(b), `'${s}' tokenised differently`);
      }
      // two ids per n-gram and word
      const one = loadSentenceEncoder(model).tokenizer;
      assert.equal(native.tokenizer.encode('Datei öffnen').length, 2 * one.encode('Datei öffnen').length);
      const dd = maxDiff(await lite.embed(sents, { lang: null }), native.embed(sents, { center: false }));
      assert.ok(dd <= 1e-6, `${d}: lite vs native ${dd}`);
    }
  });

  it('loads the model file alone and over HTTP, embeds on worker threads', async () => {
    const ref = await (await loadModel(int8)).embed(sents, { lang: 'ru' });
    const single = await loadModel(join(int8, 'model.safetensors'));
    assert.deepEqual(Array.from(await single.embed(sents, { lang: 'ru' })), Array.from(ref));
    const server = createServer((req, res) => {
      // /keyed/…: only with the key (a server started with --api-key), as the explorer's /lite/ files
      let path = decodeURIComponent(req.url!.split('?')[0]!);
      if (path.startsWith('/keyed/')) {
        if (req.headers.authorization !== 'Bearer k3y') {
          res.statusCode = 401;
          res.end();
          return;
        }
        path = path.slice('/keyed'.length);
      }
      const f = join(dir, path);
      if (!f.startsWith(dir) || !existsSync(f) || statSync(f).isDirectory()) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.end(readFileSync(f));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      for (const url of [`http://127.0.0.1:${port}/int8`, `http://127.0.0.1:${port}/int8/model.safetensors`]) {
        const m = await loadModel(url);
        assert.deepEqual(Array.from(await m.embed(sents, { lang: 'ru' })), Array.from(ref), url);
      }
      await assert.rejects(loadModel(`http://127.0.0.1:${port}/nothing`), /HTTP 404/);
      // headers go with every request for the files (config, weights, lid.json)
      await assert.rejects(loadModel(`http://127.0.0.1:${port}/keyed/int8`), /HTTP 401/);
      assert.ok(existsSync(join(int8, 'lid.json')), 'the export has a language identifier');
      const keyed = await loadModel(`http://127.0.0.1:${port}/keyed/int8`, { headers: { authorization: 'Bearer k3y' } });
      // identified and centred sentence by sentence: only with lid.json (without it, no centring)
      const local = await loadModel(int8),
        centred = { lang: 'auto-per-sentence', center: 'force' } as const;
      const want = await local.embed(sents, centred);
      assert.notDeepEqual(Array.from(want), Array.from(await local.embed(sents, { lang: null })), 'the identifier changes the vectors');
      assert.deepEqual(Array.from(await keyed.embed(sents, centred)), Array.from(want), 'with its language identifier (lid.json) too');
      await assert.rejects(loadModel(`http://127.0.0.1:${port}/keyed/int8`, { headers: { authorization: 'Bearer nope' } }), /HTTP 401/);
      await assert.rejects(loadModel(`http://127.0.0.1:${port}/int8`, { headers: 'x' as unknown as Record<string, string> }), /headers must be an object/);
    } finally {
      server.close();
    }
    const many = Array.from({ length: 600 }, (_, i) => sents[i % sents.length]! + (i % 7 ? '' : ` ${i}`));
    const pool = await loadModel(int8, { threads: 2 });
    try {
      assert.deepEqual(Array.from(await pool.embed(many, { lang: 'ru' })), Array.from(await single.embed(many, { lang: 'ru' })));
    } finally {
      await pool.close();
    }
    await assert.rejects(loadModel(join(dir, 'missing')), /no such model/);
  });

  it('imports nothing native: the import graph, and a process where the addon cannot load', () => {
    // the static import graph of dist/src/lite/index.js: no tensor layer, no addon, no Node module (browser)
    const seen = new Set<string>();
    const walk = (f: string) => {
      if (seen.has(f)) return;
      seen.add(f);
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)) {
        const spec = m[1]!;
        assert.ok(!spec.startsWith('node:'), `${f} imports ${spec} statically (not in a browser)`);
        walk(join(dirname(f), spec));
      }
    };
    walk(join(root, 'dist/src/lite/index.js'));
    const files = [...seen].map((f) => f.slice(join(root, 'dist/src').length + 1));
    assert.ok(files.includes('text/ngrams.js') && files.includes('lite/model.js'), files.join(' '));
    for (const f of files) assert.ok(!/^(tensor|nn|models|native|embed|index)\b/.test(f), `xling/lite reaches ${f}`);
    // a child process whose addon cannot load: xling's main entry imports (the addon loads on first
    // use) and its first native call fails, naming why; xling/lite embeds
    const env = { ...process.env, XLING_ADDON: join(dir, 'no-such-addon.node') };
    const full = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `const x = await import('xling'); console.log('imported'); x.loadSentenceEncoder(${JSON.stringify(int8)});`],
      { cwd: root, env, encoding: 'utf8' },
    );
    assert.notEqual(full.status, 0);
    assert.equal(full.stdout.trim(), 'imported');
    assert.match(full.stderr, /XLING_ADDON=.*does not exist/);
    const code = `import { loadModel } from 'xling/lite'; const m = await loadModel(${JSON.stringify(int8)}); const v = await m.embed(${JSON.stringify(sents.slice(0, 5))}, { lang: 'de' }); console.log(JSON.stringify(Array.from(v)));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const got = Float32Array.from(JSON.parse(r.stdout) as number[]);
    assert.ok(maxDiff(got, loadSentenceEncoder(int8).embed(sents.slice(0, 5), { lang: 'de' })) <= 1e-6);
  });
});
