// The example page's script: loads xling/lite's browser bundle and the package's default model
// (loadModel() without a source: models/default beside the bundle), embeds the sentences of the
// text area, and shows their cosine similarities (the vectors are unit rows: a dot product) and
// each sentence's nearest other sentence. The vectors, the kernel and an embed() for more
// sentences are left on globalThis.xlingExample (test/browser.test.ts reads them).
import { loadModel } from '../../dist/browser/xling-lite.js';

const SENTENCES = [
  'Open the file',
  'Datei öffnen',
  'Ouvrir le fichier',
  'Abrir el archivo',
  'Открыть файл',
  'ファイルを開く',
  'Save changes before closing?',
  'Änderungen vor dem Schließen speichern?',
  'Enregistrer les modifications avant de fermer ?',
  'No network connection',
  'Keine Netzwerkverbindung',
  'Нет сетевого подключения',
];
// each sentence's language identified on its own (the list mixes languages), its mean vector subtracted
const LANG = 'auto-per-sentence';

const $ = (id) => document.getElementById(id);
const status = (text) => {
  $('status').textContent = text;
};

function show(sentences, v, dim) {
  const n = sentences.length,
    cos = (i, j) => {
      let s = 0;
      for (let k = 0; k < dim; k++) s += v[i * dim + k] * v[j * dim + k];
      return s;
    };
  const table = $('similarities');
  table.replaceChildren();
  const head = table.insertRow();
  head.appendChild(document.createElement('th'));
  for (let j = 0; j < n; j++) {
    const th = document.createElement('th');
    th.textContent = String(j + 1);
    th.title = sentences[j];
    head.appendChild(th);
  }
  for (let i = 0; i < n; i++) {
    const row = table.insertRow();
    const th = document.createElement('th');
    th.className = 'row';
    th.textContent = `${i + 1}. ${sentences[i]}`;
    th.title = sentences[i];
    row.appendChild(th);
    for (let j = 0; j < n; j++) {
      const c = cos(i, j),
        td = row.insertCell();
      td.textContent = c.toFixed(2);
      // CSSOM, not a style attribute: allowed under a strict Content-Security-Policy
      td.style.background = `rgba(40, 110, 200, ${Math.max(0, c).toFixed(3)})`;
      td.style.color = c > 0.55 ? '#fff' : '#222';
    }
  }
  const list = $('nearest');
  list.replaceChildren();
  for (let i = 0; i < n; i++) {
    let best = -1;
    for (let j = 0; j < n; j++) if (j !== i && (best < 0 || cos(i, j) > cos(i, best))) best = j;
    const li = document.createElement('li');
    li.textContent = best < 0 ? sentences[i] : `${sentences[i]} → ${sentences[best]} (${cos(i, best).toFixed(2)})`;
    list.appendChild(li);
  }
}

async function main() {
  const t0 = performance.now();
  const model = await loadModel();
  const loadMs = performance.now() - t0;
  const embed = async (sentences, o = { lang: LANG }) => Array.from(await model.embed(sentences, o));
  const run = async () => {
    const sentences = $('sentences')
      .value.split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    const t = performance.now();
    const v = await model.embed(sentences, { lang: LANG });
    show(sentences, v, model.dim);
    status(
      `${model.dim}-d ${model.dtype} model loaded in ${loadMs.toFixed(0)} ms, embedding with ${model.kernel === 'wasm-simd' ? 'WebAssembly SIMD' : 'TypeScript'} kernels; ${sentences.length} sentences in ${(performance.now() - t).toFixed(1)} ms`,
    );
    return { sentences, vectors: Array.from(v) };
  };
  $('sentences').value = SENTENCES.join('\n');
  const first = await run();
  $('embed').disabled = false;
  $('embed').addEventListener('click', () => {
    run().catch(fail);
  });
  globalThis.xlingExample = { dim: model.dim, dtype: model.dtype, kernel: model.kernel, languages: model.languages, ...first, embed };
  document.body.dataset.state = 'ready';
}

function fail(e) {
  status(`Error: ${e.message}`);
  document.body.dataset.state = 'error';
}

main().catch(fail);
