// Language-direction removal, measured: the k directions along which a model's per-language mean
// vectors differ most (the top principal directions of its stored means, less their average) are
// taken out of every sentence vector (x − U Uᵀ x, then unit length; a linear map, so it could be
// folded into the output projection), and the similarity-search error (X→en and en→X averaged,
// raw vectors) is reported on the everyday dev set, the gettext dev set, the game-dialogue dev set
// and a harvest's held-out documents, for each k. The rows of the everyday set are those of
// experiments/everyday-eval.mjs (English ≤ 15 words, none a training corpus holds).
// Usage: node experiments/lang-directions.mjs MODEL_DIR --everyday DEV.tsv.gz --general DEV.tsv.gz
//        [--exclude TRAIN.tsv.gz …] [--k 1,2,4,8,16]
import { devSetOf, loadNWayTsv, loadSentenceEncoder, xsimMatrix } from 'xling';
import { coreDevSets, everydayDevSet } from './dev-sets.mjs';
import { scriptOptions } from './options.mjs';

const { args, opt, all } = scriptOptions();
const excludes = all('--exclude');
const everydayFile = opt('--everyday', null);
const generalFile = opt('--general', null);
const ks = opt('--k', '1,2,4,8,16').split(',').map(Number);
const [modelDir] = args;
if (!modelDir || args.length > 1 || !everydayFile || !generalFile) {
  console.error('usage: node experiments/lang-directions.mjs MODEL_DIR --everyday DEV.tsv.gz --general DEV.tsv.gz [--exclude TRAIN.tsv.gz …] [--k 1,2,4]');
  process.exit(2);
}

/** The top k eigenvectors of the symmetric d × d matrix G (orthogonal iteration, seeded start). */
function topEigenvectors(G, d, k) {
  let Q = Array.from({ length: k }, (_, t) => Float64Array.from({ length: d }, (_, i) => Math.sin(1 + i * (t + 1.7))));
  for (let it = 0; it < 500; it++) {
    Q = Q.map((q) => {
      const z = new Float64Array(d);
      for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) z[i] += G[i * d + j] * q[j];
      return z;
    });
    for (let t = 0; t < k; t++) {
      for (let s = 0; s < t; s++) {
        let dot = 0;
        for (let i = 0; i < d; i++) dot += Q[t][i] * Q[s][i];
        for (let i = 0; i < d; i++) Q[t][i] -= dot * Q[s][i];
      }
      const n = Math.hypot(...Q[t]);
      for (let i = 0; i < d; i++) Q[t][i] /= n;
    }
  }
  return Q;
}

/** Error % (X→en and en→X averaged, macro over languages) after taking the directions U out. */
function error(vecs, U, d) {
  const proj = (V) => {
    const out = Float32Array.from(V);
    for (let r = 0; r < V.length / d; r++) {
      const x = out.subarray(r * d, (r + 1) * d);
      for (const u of U) {
        let c = 0;
        for (let i = 0; i < d; i++) c += x[i] * u[i];
        for (let i = 0; i < d; i++) x[i] -= c * u[i];
      }
      const n = Math.hypot(...x);
      for (let i = 0; i < d; i++) x[i] /= n;
    }
    return out;
  };
  let sum = 0;
  for (const [X, Y] of vecs) {
    const rows = Array.from({ length: X.length / d }, (_, i) => i);
    const m = xsimMatrix(
      [
        { lang: 'x', rows, vecs: proj(X), texts: [] },
        { lang: 'en', rows, vecs: proj(Y), texts: [] },
      ],
      d,
    );
    sum += (m.errors[0][1] + m.errors[1][0]) / 2;
  }
  return +(sum / vecs.length).toFixed(2);
}

const model = loadSentenceEncoder(modelDir);
const d = model.dim;
const means = [...model.centers.values()];
if (means.length < 2) throw new Error(`${modelDir}: the model stores no per-language means`);
const avg = new Float64Array(d);
for (const m of means) for (let i = 0; i < d; i++) avg[i] += m[i] / means.length;
const G = new Float64Array(d * d);
for (const m of means) for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) G[i * d + j] += (m[i] - avg[i]) * (m[j] - avg[j]);
const dirs = topEigenvectors(G, d, Math.max(...ks));

const sets = { everyday: { pairs: (await everydayDevSet(everydayFile, excludes)).pairs }, ...(await coreDevSets()) };
const general = await loadNWayTsv(generalFile);
sets.general = devSetOf(
  general,
  general.langs.filter((l) => l !== 'en' && general.rows.filter((r) => r.has(l) && r.has('en')).length >= 200),
  200,
  100000,
);
const vecs = Object.fromEntries(Object.entries(sets).map(([name, set]) => [name, [...set.pairs.values()].map((p) => [model.embed(p.src), model.embed(p.en)])]));
console.log(`${means.length} language means; error % (X→en, en→X) per dev set`);
for (const k of [0, ...ks])
  console.log(
    `k=${k}: ${Object.entries(vecs)
      .map(([name, v]) => `${name} ${error(v, dirs.slice(0, k), d)}`)
      .join(', ')}`,
  );
