// The README's screenshots of the web explorer, taken from a real model and graph: `xling serve
// --model M --graph G` and Debian's Chromium (puppeteer-core). Usage:
//   node scripts/readme-screenshots.mjs MODEL_DIR GRAPH_DIR "query" [OUT_DIR=docs/img]
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const [model, graph, query, outDir = 'docs/img'] = process.argv.slice(2);
if (!model || !graph || !query) {
  console.error('usage: node scripts/readme-screenshots.mjs MODEL_DIR GRAPH_DIR "query" [OUT_DIR]');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const server = spawn(process.execPath, ['dist/src/cli/main.js', 'serve', '--model', model, '--graph', graph, '--port', '0'], {
  stdio: ['ignore', 'ignore', 'pipe'],
});
const url = await new Promise((resolve, reject) => {
  let err = '';
  server.stderr.on('data', (b) => {
    err += b;
    const m = /listening on (http:\/\/\S+)/.exec(err);
    if (m) resolve(m[1]);
  });
  server.once('exit', (code) => reject(new Error(`xling serve exited (${code}): ${err}`)));
});
const browser = await puppeteer.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(url + '/', { waitUntil: 'networkidle0' });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 600000 });
  await page.type('#query', query);
  await page.click('#search-btn');
  await page.waitForSelector('.result .pick-from');
  await page.screenshot({ path: join(outDir, 'explorer-search.png') });
  await (await page.$('#figures-panel')).screenshot({ path: join(outDir, 'explorer-figures.png') });
  await page.click('.result:first-of-type .pick-from');
  const rows = await page.$$('.result');
  await (await rows[rows.length - 1].$('.pick-to')).click();
  await page.click('#path-btn');
  await page.waitForSelector('#path li.step, #path li.error', { timeout: 120000 });
  await page.screenshot({ path: join(outDir, 'explorer-path.png') });
  console.log(`screenshots in ${outDir}`);
} finally {
  await browser.close();
  server.kill('SIGTERM');
}
