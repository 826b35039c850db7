// The web explorer in a real browser (Debian's Chromium through puppeteer-core): the page loads,
// a typed query shows its nearest sentences grouped by language, clicking a result makes it the
// query, the map draws the sample coloured by language with the query's neighbours highlighted,
// and the model's figures show; behind --api-key the page asks for the key once and uses it, also
// for the model files "embed in this tab" loads. Screenshots of each view go to test-output/ (not committed).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import { FastifyInstance } from 'fastify';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { buildGraph } from '../../src/graph/build.js';
import { GraphReader, minimaxPath, openGraphIndex } from '../../src/graph/query.js';
import { indexFactory } from '../../src/index/faiss.js';
import { buildServer, closeGracefully } from '../../src/serve/server.js';
import { loadStore } from '../../src/io/sentence-store.js';
import { devColumn, root, trainTinyDual } from '../fixtures/cli.js';

// page callbacks run in the browser; the Node build has no DOM types, so they see these shapes
declare const document: {
  getElementById(id: string): { value: string } | null;
  querySelector(s: string): { textContent: string | null } | null;
  querySelectorAll(s: string): Iterable<{ textContent: string | null }>;
};
type Dataset = { dataset: Record<string, string | undefined> };
type Img = { complete: boolean; naturalWidth: number; getAttribute(n: string): string | null };

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const out = join(root, 'test-output');
const dir = mkdtempSync(join(tmpdir(), 'xling-explorer-'));
let app: FastifyInstance,
  browser: Browser,
  page: Page,
  url = '';

before(async () => {
  if (!CHROMIUM) throw new Error('no Chromium at /usr/bin/chromium: install it (bash scripts/setup.sh --test installs it)');
  mkdirSync(out, { recursive: true });
  // 50k pairs (about 10 s): a model good enough that a translation is among the 30 neighbours shown
  trainTinyDual(dir, join(dir, 'model'), { budget: { pairs: 50000 } }, ['--dev', 'data/sample/gettext.dev.tsv.gz']);
  const model = loadSentenceEncoder(join(dir, 'model'));
  const store = ['de', 'fr', 'es', 'en'].flatMap((l) =>
    devColumn(l)
      .slice(0, 60)
      .map((s) => [l, s] as const),
  );
  writeFileSync(join(dir, 'store.tsv'), store.map(([l, s]) => `${l}\t${s}`).join('\n') + '\n');
  const index = indexFactory(model.dim, 'Flat');
  const v = new Float32Array(store.length * model.dim);
  // the store embedded as the server embeds a query: each sentence identified on its own ('auto' per input)
  store.forEach(([, s], i) => v.set(model.embed([s], { lang: 'auto-per-sentence' }), i * model.dim));
  index.add(v);
  app = await buildServer({
    model,
    modelDir: join(dir, 'model'),
    index,
    indexPath: join(dir, 'index.faiss'),
    store: await loadStore(join(dir, 'store.tsv')),
    mapSample: 200,
  });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
});
after(async () => {
  await browser?.close();
  if (app) await closeGracefully(app, 500);
  rmSync(dir, { recursive: true, force: true });
});

describe('web explorer (Chromium)', () => {
  it('loads, searches, groups neighbours by language, highlights them on the map', async () => {
    await page.goto(url + '/', { waitUntil: 'networkidle0' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    assert.match(await page.$eval('#model-info', (e) => e.textContent ?? ''), /dual model, 32-d, \d+ languages, 240 sentences indexed/);
    assert.equal(await page.$$eval('#map-svg circle', (c) => c.length), 200, 'the map draws the sample');
    assert.ok((await page.$$eval('#legend span', (s) => s.length)) >= 4, 'a colour per language');
    await page.screenshot({ path: join(out, 'explorer-map.png') });

    const query = devColumn('de')[5]!;
    await page.type('#query', query);
    await page.click('#search-btn');
    await page.waitForSelector('.result');
    const groups = await page.$$eval('.lang-group', (gs) => gs.map((g) => (g as unknown as Dataset).dataset.lang));
    assert.ok(groups.includes('de') && groups.length >= 3, `grouped by language: ${groups}`);
    const first = await page.$eval('.lang-group[data-lang="de"] .result .text', (e) => e.textContent);
    assert.equal(first, query, 'the query sentence itself is its nearest neighbour');
    // the translations of the query are found in other languages
    const texts = await page.$$eval('.result .text', (es) => es.map((e) => e.textContent));
    assert.ok(
      ['fr', 'es', 'en'].some((l) => texts.includes(devColumn(l)[5]!)),
      'a translation among the neighbours',
    );
    assert.ok((await page.$$eval('#map-svg circle.highlight', (c) => c.length)) > 0, 'neighbours highlighted on the map');
    await page.screenshot({ path: join(out, 'explorer-search.png'), fullPage: true });

    // clicking a result makes it the query
    const other = await page.$eval('.lang-group:not([data-lang="de"]) .result .text', (e) => e.textContent!);
    await page.click('.lang-group:not([data-lang="de"]) .result');
    await page.waitForFunction((t) => document.getElementById('query')?.value === t, {}, other);
    await page.waitForFunction(
      (t) => document.querySelector('.result .text')?.textContent === t || [...document.querySelectorAll('.result .text')].some((e) => e.textContent === t),
      {},
      other,
    );
  });

  it("shows the model's figures (training curve, dev error heat map)", async () => {
    const srcs = await page.$$eval('#figures img', (im) => im.map((i) => (i as unknown as Img).getAttribute('src')));
    assert.ok(srcs.includes('/model/loss.svg') && srcs.includes('/model/dev-xsim.svg'), `${srcs}`);
    const loaded = await page.$$eval('#figures img', (im) => im.every((i) => (i as unknown as Img).complete && (i as unknown as Img).naturalWidth > 0));
    assert.ok(loaded, 'the figures load');
    await (await page.$('#figures-panel'))!.screenshot({ path: join(out, 'explorer-figures.png') });
  });
});

describe('web explorer: embed in this tab (xling/lite in Chromium)', () => {
  type LiteApi = { xlingLite: { embed(texts: string[], o?: { lang?: string | null }): Promise<number[]>; kernel(): Promise<string> } };
  const inPage = (texts: string[], lang?: string) =>
    page.evaluate((t, l) => (globalThis as unknown as LiteApi).xlingLite.embed(t, l === undefined ? undefined : { lang: l }), texts, lang);
  const served = async (texts: string[], lang?: string) =>
    (await (
      await fetch(url + '/embed', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: texts, ...(lang ? { lang } : {}) }),
      })
    ).json()) as number[][];
  const maxDiff = (a: number[], b: number[]) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

  it('loads the model into the page, embeds as the server does (also offline), searches with the in-page vector, and measures sentences/s', async () => {
    await page.goto(url + '/', { waitUntil: 'networkidle0' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    assert.equal(await page.$eval('#in-tab-label', (e) => (e as unknown as { hidden: boolean }).hidden), false, 'offered for a bag-of-n-grams model');
    await page.click('#in-tab');
    await page.waitForSelector('body[data-lite="ready"]', { timeout: 60000 });
    const texts = [devColumn('de')[3]!, devColumn('fr')[4]!, devColumn('en')[9]!, 'Ünïcödé “quotes” — ﬁ'];
    // the same vectors as the server's /embed: with a language, and identified (the server identifies each input on its own: lite's 'auto-per-sentence')
    for (const lang of ['de', undefined]) {
      const a = await inPage(texts, lang ?? 'auto-per-sentence'),
        b = (await served(texts, lang)).flat();
      assert.equal(a.length, b.length);
      assert.ok(maxDiff(a, b) <= 1e-5, `lang ${lang}: in-page vs server ${maxDiff(a, b)}`);
    }
    // offline: the loaded model needs no network
    await page.setOfflineMode(true);
    try {
      const off = await inPage(texts.slice(0, 2), 'de');
      assert.ok(maxDiff(off, (await served(texts.slice(0, 2), 'de')).flat()) <= 1e-5, 'offline in-page embedding');
    } finally {
      await page.setOfflineMode(false);
    }
    // sentences/s in the page
    const many = devColumn('de').concat(devColumn('ja'));
    // the best of 3 after a warm-up (the first call compiles the page's code)
    const rate = await page.evaluate(async (t) => {
      const api = (globalThis as unknown as LiteApi).xlingLite;
      await api.embed(t);
      let best = 0;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        await api.embed(t);
        best = Math.max(best, t.length / ((performance.now() - t0) / 1000));
      }
      return best;
    }, many);
    // the page embeds with xling/lite's WebAssembly SIMD kernels (a plain memory: the page is not cross-origin isolated)
    const kernel = await page.evaluate(() => (globalThis as unknown as LiteApi).xlingLite.kernel());
    assert.equal(kernel, 'wasm-simd');
    console.log(`# xling/lite in Chromium (${kernel}): ${many.length} sentences at ${rate.toFixed(0)} sentences/s (busy machine)`);
    assert.ok(rate > 0);
    // a search with the query embedded in the tab finds what the server-side search finds
    const query = devColumn('de')[5]!;
    await page.$eval('#query', (e) => {
      (e as unknown as { value: string }).value = '';
    });
    await page.type('#query', query);
    await page.click('#search-btn');
    await page.waitForFunction(() => /embedded in this tab/.test(document.querySelector('#status')?.textContent ?? ''), { timeout: 30000 });
    const ids = await page.$$eval('.result', (rs) => rs.map((r) => Number((r as unknown as Dataset).dataset.id)));
    const server = (await (
      await fetch(url + '/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: query, k: 30 }) })
    ).json()) as { results: { id: number }[] };
    assert.deepEqual(
      [...ids].sort((x, y) => x - y),
      server.results.map((r) => r.id).sort((x, y) => x - y),
    );
    await page.screenshot({ path: join(out, 'explorer-in-tab.png'), fullPage: true });
  });
});

describe('web explorer behind --api-key (Chromium)', () => {
  let kapp: FastifyInstance,
    kurl = '';
  before(async () => {
    const model = loadSentenceEncoder(join(dir, 'model'));
    const index = indexFactory(model.dim, 'Flat');
    const store = await loadStore(join(dir, 'store.tsv'));
    index.add(model.embed(Array.from({ length: store.size }, (_, i) => store.text(i))));
    kapp = await buildServer({ model, modelDir: join(dir, 'model'), index, store, mapSample: 50, apiKey: 's3cret' });
    kurl = await kapp.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    if (kapp) await closeGracefully(kapp, 500);
  });

  it('the page loads without the key, asks for it once, and then uses the API', async () => {
    const kpage = await browser.newPage();
    const asked: string[] = [];
    kpage.on('dialog', (d) => {
      asked.push(d.message());
      void d.accept('s3cret');
    });
    try {
      await kpage.goto(kurl + '/', { waitUntil: 'networkidle0' });
      await kpage.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
      assert.equal(asked.length, 1, `asked once: ${asked}`);
      assert.match(asked[0]!, /API key/);
      assert.match(await kpage.$eval('#model-info', (e) => e.textContent ?? ''), /240 sentences indexed/);
      const loaded = await kpage.$$eval(
        '#figures img',
        (im) => im.length > 0 && im.every((i) => (i as unknown as Img).complete && (i as unknown as Img).naturalWidth > 0),
      );
      assert.ok(loaded, 'the figures load with the key');
    } finally {
      await kpage.close();
    }
  });

  it("embeds in the tab with the key: xling/lite fetches /lite/ with it, the same vectors and neighbours as the server's", async () => {
    const kpage = await browser.newPage();
    kpage.on('dialog', (d) => {
      void d.accept('s3cret');
    });
    const auth = { authorization: 'Bearer s3cret', 'content-type': 'application/json' };
    try {
      // the model files are behind the key too
      assert.equal((await fetch(kurl + '/lite/model.safetensors')).status, 401);
      await kpage.goto(kurl + '/', { waitUntil: 'networkidle0' });
      await kpage.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
      assert.equal(await kpage.$eval('#in-tab-label', (e) => (e as unknown as { hidden: boolean }).hidden), false);
      await kpage.click('#in-tab');
      await kpage.waitForSelector('body[data-lite="ready"], #status.error', { timeout: 60000 });
      assert.equal(
        await kpage.$eval('body', (b) => (b as unknown as Dataset).dataset.lite),
        'ready',
        `status: ${await kpage.$eval('#status', (e) => e.textContent)}`,
      );
      const texts = [devColumn('de')[3]!, devColumn('en')[9]!];
      const a = await kpage.evaluate(
        (t) =>
          (globalThis as unknown as { xlingLite: { embed(t: string[], o: { lang: string }): Promise<number[]> } }).xlingLite.embed(t, {
            lang: 'auto-per-sentence',
          }),
        texts,
      );
      const b = (
        (await (await fetch(kurl + '/embed', { method: 'POST', headers: auth, body: JSON.stringify({ inputs: texts }) })).json()) as number[][]
      ).flat();
      assert.equal(a.length, b.length);
      assert.ok(
        a.every((x, i) => Math.abs(x - b[i]!) <= 1e-5),
        "in-page vectors equal the keyed server's",
      );
      const query = devColumn('fr')[5]!;
      await kpage.type('#query', query);
      await kpage.click('#search-btn');
      await kpage.waitForFunction(() => /embedded in this tab/.test(document.querySelector('#status')?.textContent ?? ''), { timeout: 30000 });
      const ids = await kpage.$$eval('.result', (rs) => rs.map((r) => Number((r as unknown as Dataset).dataset.id)));
      const server = (await (await fetch(kurl + '/search', { method: 'POST', headers: auth, body: JSON.stringify({ text: query, k: 30 }) })).json()) as {
        results: { id: number }[];
      };
      assert.deepEqual(
        [...ids].sort((x, y) => x - y),
        server.results.map((r) => r.id).sort((x, y) => x - y),
      );
    } finally {
      await kpage.close();
    }
  });
});

describe('web explorer with a graph (Chromium)', () => {
  let gapp: FastifyInstance,
    g: GraphReader,
    gurl = '';
  before(async () => {
    const gdir = join(dir, 'graph');
    await buildGraph({
      model: join(dir, 'model'),
      out: gdir,
      sources: [{ tsv: 'data/sample/gettext.dev.tsv.gz', langs: ['en', 'de', 'fr'] }],
      k: 8,
      candidates: 32,
      trainSample: 5000,
      recallTarget: 0.95,
      filter: { minWords: 0, maxWords: 0, dedup: true },
      quiet: true,
      log: () => {},
    });
    g = new GraphReader(gdir);
    gapp = await buildServer({
      model: loadSentenceEncoder(join(dir, 'model')),
      modelDir: join(dir, 'model'),
      graph: g,
      index: openGraphIndex(gdir),
      store: g.store,
      mapSample: 200,
    });
    gurl = await gapp.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    if (gapp) await closeGracefully(gapp, 500);
    g?.close();
  });

  it('picks two sentences and draws the minimax path between them', async () => {
    await page.goto(gurl + '/', { waitUntil: 'networkidle0' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    await page.type('#query', devColumn('de')[7]!);
    await page.click('#search-btn');
    await page.waitForSelector('.result .pick-from');
    const ids = await page.$$eval('.result', (rs) => rs.map((r) => Number((r as unknown as Dataset).dataset.id)));
    await page.click('.result:first-of-type .pick-from');
    const rows = await page.$$('.result');
    await (await rows[rows.length - 1]!.$('.pick-to'))!.click();
    await page.click('#path-btn');
    await page.waitForSelector('#path li.step, #path li.muted:not(:empty), #path li.error', { timeout: 30000 });
    await page.waitForFunction(() => !(document.querySelector('#path li')?.textContent ?? '').startsWith('searching'));
    const shown = await page.$$eval('#path li.step', (ls) => ls.map((l) => Number((l as unknown as Dataset).dataset.id)));
    const from = ids[0]!,
      to = ids[ids.length - 1]!;
    const want = minimaxPath((i) => g.row(i), g.size, await page.$eval('.result:first-of-type', (r) => Number((r as unknown as Dataset).dataset.id)), to);
    assert.ok(want, 'the picked sentences are connected');
    assert.deepEqual(
      shown,
      want.steps.map((s) => s.id),
      `path from #${from} to #${to}`,
    );
    await page.screenshot({ path: join(out, 'explorer-path.png'), fullPage: true });
  });
});
