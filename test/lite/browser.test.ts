// xling/lite's browser bundle in a real browser (Debian's Chromium through puppeteer-core): the
// package folder served by a static HTTP server on 127.0.0.1, the example page
// (examples/browser/index.html) loads dist/browser/xling-lite.js and the default model
// (models/default, found from the bundle's own URL) and embeds; the vectors equal Node's xling/lite
// on the same sentences (≤ 1e-5), every request stays on the page's origin, and embedding goes on
// offline. Under a strict Content-Security-Policy (no 'wasm-unsafe-eval') the page still embeds,
// with the TypeScript kernels; with 'wasm-unsafe-eval' added, with the WebAssembly ones. The bundle
// itself holds no Node module, no eval and no new Function (checked without a browser).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { extname, join, normalize, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import { loadModel, LoadedLiteModel } from '../../src/lite/index.js';
import { root } from '../fixtures/cli.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
/** The package folder as served: the bundle, the example, the default model. */
const PKG = root;
const BUNDLE = join(PKG, 'dist/browser/xling-lite.js');
const MODEL = join(PKG, 'models/default');
// page callbacks run in the browser; the Node build has no DOM types, so they see this shape
declare const document: { querySelectorAll(s: string): { length: number } };
const STRICT = "default-src 'self'; script-src 'self'";

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

/** The bundle, built now from the current sources (the build refuses a bundle with a Node module or eval in it). */
function buildBundle(): void {
  const r = spawnSync(process.execPath, ['scripts/build-browser.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `scripts/build-browser.mjs failed: ${r.stderr}`);
}

describe('xling/lite browser bundle (no browser)', () => {
  before(buildBundle);

  it('is one ES module with no Node module, no require, no eval or new Function, no import of its own', () => {
    const text = readFileSync(BUNDLE, 'utf8');
    assert.doesNotMatch(text, /\bnode:[a-z_]+/, 'a Node module');
    assert.doesNotMatch(text, /\brequire\s*\(/, 'require()');
    assert.doesNotMatch(text, /(^|[^.\w$])eval\s*\(/, 'eval');
    assert.doesNotMatch(text, /\bnew\s+Function\b|(^|[^.\w$])Function\s*\(/, 'new Function');
    // self-contained: no static or dynamic import (a page loads one file)
    assert.doesNotMatch(text, /^\s*import\s/m);
    assert.doesNotMatch(text, /\bimport\s*\(/);
    const exported = /^export\s*\{([^}]*)\}/m
      .exec(text)?.[1]
      ?.split(',')
      .map((s) => s.trim().replace(/^\w+ as /, ''))
      .sort();
    assert.deepEqual(exported, ['LiteModel', 'defaultModelUrl', 'loadModel']);
    // the Node entry's worker threads and file reading are not in it
    assert.doesNotMatch(text, /worker_threads|WorkerPool|readShared/);
  });

  it("finds the default model from its own URL: the bundle (dist/browser/) and tsc's output (dist/src/lite/) name the same models/default/", async () => {
    const want = pathToFileURL(join(root, 'models/default')).href + '/';
    const bundled = (await import(pathToFileURL(BUNDLE).href)) as typeof import('../../src/lite/browser.js');
    const compiled = await import('../../src/lite/browser.js');
    assert.equal(bundled.defaultModelUrl().href, want);
    assert.equal(compiled.defaultModelUrl().href, want);
  });

  it("the browser entry's compiled import graph reaches no Node module and not the Node entry", () => {
    const seen = new Set<string>();
    const walk = (f: string) => {
      if (seen.has(f)) return;
      seen.add(f);
      for (const m of readFileSync(f, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm)) {
        const spec = m[1] ?? m[2]!;
        assert.ok(spec.startsWith('.'), `${f} imports ${spec} (not a module of xling/lite)`);
        walk(join(f, '..', spec));
      }
    };
    walk(join(root, 'dist/src/lite/browser.js'));
    const files = [...seen].map((f) => f.slice(join(root, 'dist/src').length + 1));
    assert.ok(files.includes('lite/load.js') && files.includes('lite/default-model.js'), files.join(' '));
    for (const f of files) assert.ok(!/^lite\/(index|pool|worker)\.js$/.test(f), `the browser entry reaches ${f}`);
  });
});

/** A static server of the package folder on 127.0.0.1 (a random port), with this CSP header on every response when set. */
function serve(dir: string, log: string[], csp: { value: string | null }): Promise<Server> {
  const types: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.json': 'application/json',
    '.md': 'text/markdown; charset=utf-8',
  };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    log.push(path);
    const file = normalize(join(dir, path));
    if (csp.value) res.setHeader('content-security-policy', csp.value);
    if (!(file === dir || file.startsWith(dir + sep)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('xling/lite browser bundle in Chromium', { skip: CHROMIUM ? false : 'no Chromium at /usr/bin/chromium (scripts/setup.sh --test installs it)' }, () => {
  type Example = {
    dim: number;
    dtype: string;
    kernel: string;
    languages: string[];
    sentences: string[];
    vectors: number[];
    embed(t: string[], o?: { lang?: string | null }): Promise<number[]>;
  };
  type InPage = { xlingExample: Example };
  const log: string[] = [];
  const csp: { value: string | null } = { value: null };
  let server: Server,
    browser: Browser,
    origin = '',
    profile = '',
    node: LoadedLiteModel;
  const dev = gunzipSync(readFileSync(join(root, 'data/sample/gettext.dev.tsv.gz')))
    .toString('utf8')
    .split('\n')
    .slice(1, 201)
    .flatMap((l) => l.split('\t'))
    .filter(Boolean);
  const extra = ['Die Datei wurde nicht gefunden.', 'Le fichier est introuvable.', 'ファイルが見つかりません', 'Ünïcödé “quotes” — ﬁ', ''];

  before(async () => {
    buildBundle();
    assert.ok(existsSync(join(MODEL, 'model.safetensors')), `no default model at ${MODEL} (the package's models/default)`);
    node = await loadModel(MODEL);
    server = await serve(PKG, log, csp);
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    profile = mkdtempSync(join(tmpdir(), 'xling-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-dev-shm-usage',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await node?.close();
    await new Promise((r) => (server ? server.close(r) : r(null)));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** Opens the example page under a CSP (null: none); the page, what it requested, and its uncaught errors. */
  async function open(policy: string | null): Promise<{ page: Page; requests: string[]; errors: string[] }> {
    csp.value = policy;
    const page = await browser.newPage();
    const requests: string[] = [],
      errors: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${origin}/examples/browser/index.html`, { waitUntil: 'load' });
    await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 120000 });
    const state = await page.$eval('body', (b) => (b as unknown as { dataset: { state: string } }).dataset.state);
    assert.equal(state, 'ready', `the page says: ${await page.$eval('#status', (e) => e.textContent)}`);
    return { page, requests, errors };
  }

  /** The page's vectors equal Node's xling/lite on the same sentences, with each lang. */
  async function sameAsNode(page: Page): Promise<void> {
    const ex = await page.evaluate(() => {
      const e = (globalThis as unknown as InPage).xlingExample;
      return { dim: e.dim, dtype: e.dtype, kernel: e.kernel, sentences: e.sentences, vectors: e.vectors, languages: e.languages };
    });
    const kernel = ex.kernel;
    assert.equal(ex.dim, node.dim);
    assert.equal(ex.dtype, node.dtype);
    assert.deepEqual(ex.languages, node.languages);
    assert.ok(ex.sentences.length >= 6 && ex.vectors.length === ex.sentences.length * node.dim);
    const d0 = maxDiff(ex.vectors, await node.embed(ex.sentences, { lang: 'auto-per-sentence' }));
    assert.ok(d0 <= 1e-5, `the example's vectors vs Node's: ${d0}`);
    let worst = d0;
    for (const lang of [undefined, null, node.languages[0] ?? null, 'auto-per-sentence']) {
      const got = await page.evaluate((t, l) => (globalThis as unknown as InPage).xlingExample.embed(t, l === undefined ? {} : { lang: l }), extra, lang);
      const d = maxDiff(got, await node.embed(extra, lang === undefined ? {} : { lang }));
      assert.ok(d <= 1e-5, `lang ${String(lang)}: page vs Node ${d}`);
      worst = Math.max(worst, d);
    }
    // sentences/s in the page: the best of 3 over the dev set's first rows (after a warm-up)
    const rate = await page.evaluate(async (t) => {
      const e = (globalThis as unknown as InPage).xlingExample;
      await e.embed(t, { lang: null });
      let best = 0;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        await e.embed(t, { lang: null });
        best = Math.max(best, t.length / ((performance.now() - t0) / 1000));
      }
      return best;
    }, dev);
    assert.ok(rate > 0);
    console.log(
      `# ${ex.sentences.length + extra.length} sentences, ${kernel} in Chromium vs Node's xling/lite: max |Δ| ${worst.toExponential(2)}; ${dev.length} dev sentences at ${rate.toFixed(0)} sentences/s (busy machine)`,
    );
  }

  it('the example page loads the bundle and the default model from the package and embeds as Node does (WebAssembly SIMD)', async () => {
    log.length = 0;
    const { page, requests, errors } = await open(null);
    try {
      assert.equal(await page.evaluate(() => (globalThis as unknown as InPage).xlingExample.kernel), 'wasm-simd');
      await sameAsNode(page);
      // the similarity table: a row per sentence, a cell per pair, each a cosine
      const n = await page.evaluate(() => (globalThis as unknown as InPage).xlingExample.sentences.length);
      const cells = await page.$$eval('#similarities td', (tds) => tds.map((t) => Number(t.textContent)));
      assert.equal(cells.length, n * n);
      cells.forEach((c, i) => {
        assert.ok(c >= -1 && c <= 1, `cell ${i}: ${c}`);
        if (i % (n + 1) === 0) assert.equal(c, 1, 'a sentence with itself');
      });
      assert.equal((await page.$$('#nearest li')).length, n);
      // what was fetched: the page, the bundle and the default model beside it, all from this origin
      for (const f of [
        '/examples/browser/index.html',
        '/examples/browser/main.js',
        '/dist/browser/xling-lite.js',
        '/models/default/config.json',
        '/models/default/model.safetensors',
        '/models/default/lid.json',
      ])
        assert.ok(log.includes(f), `${f} requested (${log.join(' ')})`);
      assert.deepEqual(
        requests.filter((u) => !u.startsWith(origin + '/')),
        [],
        "only the page's origin",
      );
      // offline once loaded: the model needs no network
      await page.setOfflineMode(true);
      try {
        const off = await page.evaluate((t) => (globalThis as unknown as InPage).xlingExample.embed(t, {}), extra);
        assert.ok(maxDiff(off, await node.embed(extra, {})) <= 1e-5, 'offline');
      } finally {
        await page.setOfflineMode(false);
      }
      // clicking Embed again after an edit: the table follows the text area
      await page.$eval('#sentences', (e) => {
        (e as unknown as { value: string }).value = 'Open the file\nDatei öffnen\n';
      });
      await page.click('#embed');
      await page.waitForFunction(() => document.querySelectorAll('#similarities td').length === 4, { timeout: 30000 });
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  it("under a strict Content-Security-Policy without 'wasm-unsafe-eval' the page still embeds (TypeScript kernels), with it WebAssembly", async () => {
    const strict = await open(STRICT);
    try {
      assert.equal(
        await strict.page.evaluate(() => (globalThis as unknown as InPage).xlingExample.kernel),
        'js',
        'WebAssembly refused by the policy: the TypeScript path',
      );
      await sameAsNode(strict.page);
      assert.deepEqual(strict.errors, []);
      assert.deepEqual(
        strict.requests.filter((u) => !u.startsWith(origin + '/')),
        [],
      );
    } finally {
      await strict.page.close();
    }
    const wasm = await open(`${STRICT} 'wasm-unsafe-eval'`);
    try {
      assert.equal(await wasm.page.evaluate(() => (globalThis as unknown as InPage).xlingExample.kernel), 'wasm-simd');
      await sameAsNode(wasm.page);
    } finally {
      await wasm.page.close();
    }
  });

  it('a model URL that is not there: loadModel rejects naming the URL', async () => {
    const { page } = await open(null);
    try {
      const message = await page.evaluate(async (o) => {
        const lite = (await import(`${o}/dist/browser/xling-lite.js`)) as { loadModel(u?: string): Promise<unknown> };
        try {
          await lite.loadModel(`${o}/no-such-model/`);
          return 'loaded';
        } catch (e) {
          return (e as Error).message;
        }
      }, origin);
      assert.match(message, /\/no-such-model\/(model\.safetensors|config\.json): HTTP 404/);
    } finally {
      await page.close();
    }
  });
});
