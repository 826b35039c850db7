// The xling explorer: nearest sentences of a query grouped by language (click one to make it the
// query), the minimax trajectory between two picked sentences when the server has a graph, a 2-D
// map of a sample of the space coloured by language (hover: the text; the query's neighbours
// highlighted), and the model's figures. Talks to the server's JSON routes only.

import { loadModel, LoadedLiteModel } from '../src/lite/index.js';

interface Info {
  model_id: string;
  xling: {
    kind: string | null;
    dim: number;
    languages: string[];
    index: { ntotal: number } | null;
    graph?: { sentences: number } | null;
    lite?: { files: string } | null;
  };
}
interface Hit {
  id: number;
  score: number;
  text: string | null;
  lang: string | null;
}
interface MapPoint {
  id: number;
  x: number;
  y: number;
  lang: string | null;
  text: string;
}
interface PathStep {
  id: number;
  text: string;
  lang: string | null;
  distance: number;
}

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];
const colours = new Map<string, string>();
const colourOf = (lang: string | null) => {
  const k = lang ?? '?';
  if (!colours.has(k)) colours.set(k, PALETTE[colours.size % PALETTE.length]!);
  return colours.get(k)!;
};

// A server started with --api-key answers the API only with `Authorization: Bearer KEY`: on a 401
// the page asks for the key once, keeps it in this browser (localStorage) and sends it.
const KEY = 'xling-api-key';
let asking: Promise<string | null> | null = null;
async function authFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const send = () => {
    const key = localStorage.getItem(KEY);
    return fetch(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), ...(key ? { authorization: `Bearer ${key}` } : {}) } });
  };
  let r = await send();
  if (r.status === 401) {
    asking ??= Promise.resolve(window.prompt('This server needs its API key (xling serve --api-key):'));
    const key = await asking;
    asking = null;
    if (!key) return r;
    localStorage.setItem(KEY, key.trim());
    r = await send();
    if (r.status === 401) localStorage.removeItem(KEY);
  }
  return r;
}

async function api<T>(path: string, body?: unknown): Promise<T> {
  const r = await authFetch(path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = (await r.json()) as T & { error?: string };
  if (!r.ok) throw new Error(j.error ?? `${r.status}`);
  return j;
}

function el(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

let info: Info | null = null;

// "embed in this tab": xling/lite loads the model's files once (/lite/) and embeds queries here;
// the server only searches the vector (no round trip for the query vector). Behind --api-key the
// files are fetched with the key the page keeps (the API calls before this one have asked for it);
// a failed load is not kept, so ticking the box again tries again.
let liteModel: Promise<LoadedLiteModel> | null = null;
const lite = () => {
  if (!liteModel) {
    const key = localStorage.getItem(KEY);
    liteModel = loadModel(new URL(info!.xling.lite!.files, location.href).href, key ? { headers: { authorization: `Bearer ${key}` } } : {});
    liteModel.catch(() => {
      liteModel = null;
    });
  }
  return liteModel;
};
const inTab = () => !!info?.xling.lite && ($('in-tab') as HTMLInputElement).checked;
/** For tests and the console: vectors of texts embedded in this tab, and the load time. */
(window as unknown as { xlingLite: unknown }).xlingLite = {
  embed: async (texts: string[], o?: { lang?: string | null }) => Array.from(await (await lite()).embed(texts, o)),
  dim: async () => (await lite()).dim,
  /** What embeds in this tab: 'wasm-simd' (xling/lite's WebAssembly kernels) or 'js'. */
  kernel: async () => (await lite()).kernel,
};
const picked: { from: Hit | null; to: Hit | null } = { from: null, to: null };

async function search(text: string): Promise<void> {
  const status = $('status');
  status.textContent = 'searching…';
  status.className = 'muted';
  try {
    let body: Record<string, unknown> = { text, k: 30 },
      note = '';
    if (inTab()) {
      const m = await lite(),
        t0 = performance.now();
      // the server's rule for a text: identified on its own ('auto-per-sentence'; one text: the same as 'auto')
      const v = await m.embed([text], { lang: 'auto-per-sentence' });
      note = ` (query embedded in this tab in ${(performance.now() - t0).toFixed(1)} ms)`;
      body = { vector: Array.from(v), k: 30 };
    }
    const { results } = await api<{ results: Hit[] }>('/search', body);
    renderResults(results);
    highlight(new Set(results.map((r) => r.id)));
    status.textContent = `${results.length} nearest sentences${note}`;
  } catch (e) {
    status.textContent = (e as Error).message;
    status.className = 'error';
  }
}

function renderResults(results: Hit[]): void {
  const box = $('results');
  box.replaceChildren();
  const groups = new Map<string, Hit[]>();
  for (const r of results) {
    const k = r.lang ?? '?';
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  for (const [lang, hits] of groups) {
    const g = el('div', { class: 'lang-group', 'data-lang': lang }, el('h3', {}, `${lang} (${hits.length})`));
    for (const h of hits) {
      const row = el(
        'div',
        { class: 'result', 'data-id': String(h.id), title: 'make it the query' },
        el('span', { class: 'score' }, h.score.toFixed(3)),
        el('span', { class: 'text' }, h.text ?? `#${h.id}`),
      );
      row.addEventListener('click', () => {
        ($('query') as HTMLInputElement).value = h.text ?? '';
        if (h.text) void search(h.text);
      });
      if (info?.xling.graph) {
        for (const end of ['from', 'to'] as const) {
          const b = el('button', { class: `pick pick-${end}`, title: `path ${end} here` }, end);
          b.addEventListener('click', (ev) => {
            ev.stopPropagation();
            pick(end, h);
          });
          row.append(b);
        }
      }
      g.append(row);
    }
    box.append(g);
  }
}

function pick(end: 'from' | 'to', h: Hit): void {
  picked[end] = h;
  const span = $(`path-${end}`);
  span.textContent = `${h.lang ?? '?'}: ${h.text ?? `#${h.id}`}`;
  span.className = '';
  ($('path-btn') as HTMLButtonElement).disabled = !(picked.from && picked.to);
}

async function findPath(): Promise<void> {
  const list = $('path');
  list.replaceChildren(el('li', { class: 'muted' }, 'searching…'));
  try {
    const r = await api<{ found: boolean; steps: PathStep[]; maxStep: number }>('/path', { from: picked.from!.id, to: picked.to!.id });
    if (!r.found) {
      list.replaceChildren(el('li', { class: 'muted' }, "no path along the graph's neighbour edges"));
      return;
    }
    list.replaceChildren(
      ...r.steps.map((s, i) =>
        el(
          'li',
          { class: 'step', 'data-id': String(s.id) },
          `${s.lang ?? '?'}: ${s.text}`,
          el('span', { class: 'muted' }, i ? `  (step ${s.distance.toFixed(3)})` : ''),
        ),
      ),
    );
    highlight(new Set(r.steps.map((s) => s.id)));
  } catch (e) {
    list.replaceChildren(el('li', { class: 'error' }, (e as Error).message));
  }
}

function highlight(ids: Set<number>): void {
  for (const c of Array.from(document.querySelectorAll<SVGCircleElement>('#map-svg circle'))) c.classList.toggle('highlight', ids.has(Number(c.dataset.id)));
}

async function drawMap(): Promise<void> {
  const svg = $('map-svg') as unknown as SVGSVGElement;
  try {
    const m = await api<{ points: MapPoint[]; method: string; sample: number }>('/map');
    $('map-method').textContent = `— ${m.method}, ${m.sample} sentences`;
    const xs = m.points.map((p) => p.x),
      ys = m.points.map((p) => p.y);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const sx = (x: number) => 20 + ((x - x0) / (x1 - x0 || 1)) * 960,
      sy = (y: number) => 20 + ((y - y0) / (y1 - y0 || 1)) * 660;
    const tip = $('tooltip');
    for (const p of m.points) {
      const c = document.createElementNS('http://www.w3.org/2000/svg', 'circle');
      c.setAttribute('cx', sx(p.x).toFixed(1));
      c.setAttribute('cy', sy(p.y).toFixed(1));
      c.setAttribute('r', '4');
      c.setAttribute('fill', colourOf(p.lang));
      c.dataset.id = String(p.id);
      c.dataset.lang = p.lang ?? '';
      c.addEventListener('mouseenter', (ev) => {
        tip.textContent = `${p.lang ?? '?'}: ${p.text}`;
        tip.style.display = 'block';
        tip.style.left = `${(ev as MouseEvent).clientX + 12}px`;
        tip.style.top = `${(ev as MouseEvent).clientY + 12}px`;
      });
      c.addEventListener('mouseleave', () => {
        tip.style.display = 'none';
      });
      c.addEventListener('click', () => {
        ($('query') as HTMLInputElement).value = p.text;
        void search(p.text);
      });
      svg.append(c);
    }
    $('legend').replaceChildren(...[...colours].map(([l, col]) => el('span', {}, el('i', { style: `background:${col}` }), l)));
  } catch (e) {
    $('map-method').textContent = `— ${(e as Error).message}`;
  }
}

async function showFigures(): Promise<void> {
  const figs = await api<string[]>('/model/figures');
  // with a key, fetched with it (an <img src> cannot send it) and shown from object URLs
  const urls = localStorage.getItem(KEY)
    ? await Promise.all(figs.map(async (f) => URL.createObjectURL(await (await authFetch(`/model/${f}`)).blob())))
    : figs.map((f) => `/model/${f}`);
  if (figs.length) $('figures').replaceChildren(...figs.map((f, i) => el('img', { src: urls[i]!, alt: f })));
}

async function main(): Promise<void> {
  info = await api<Info>('/info');
  $('model-info').textContent =
    `${info.model_id} — ${info.xling.kind ?? '?'} model, ${info.xling.dim}-d, ${info.xling.languages.length} languages` +
    (info.xling.index ? `, ${info.xling.index.ntotal} sentences indexed` : ', no index');
  $('path-panel').hidden = !info.xling.graph;
  $('in-tab-label').hidden = !info.xling.lite;
  $('in-tab').addEventListener('change', () => {
    if (!inTab()) return;
    const status = $('status');
    status.textContent = 'loading the model into this tab…';
    const t0 = performance.now();
    lite().then(
      (m) => {
        status.textContent = `model loaded in this tab (${m.dtype}, ${m.dim}-d, ${m.kernel === 'wasm-simd' ? 'WebAssembly SIMD' : 'JavaScript'}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
        document.body.dataset.lite = 'ready';
      },
      (e: Error) => {
        status.textContent = `cannot embed in this tab: ${e.message}`;
        status.className = 'error';
        ($('in-tab') as HTMLInputElement).checked = false;
      },
    );
  });
  $('search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = ($('query') as HTMLInputElement).value.trim();
    if (q) void search(q);
  });
  $('path-btn').addEventListener('click', () => void findPath());
  await Promise.all([info.xling.index ? drawMap() : Promise.resolve(), showFigures()]);
  document.body.dataset.ready = 'true';
}

void main();
