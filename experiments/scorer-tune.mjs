// Tuning the second-stage scorer on half a only (half b stays held out): the variants of
// the "Tuning on half a" table of bench/RESULTS.md. Run experiments/scorer-eval.mjs first (it writes the
// halves), then, from the repository root after npx tsc -p .:
//   node experiments/scorer-tune.mjs MODEL --halves WORK/halves [--parallel TSV] [--cache DIR]
//        [--tables gold|par|full] [--prune P] [--l2 X] [--k K] [--assignment greedy|exchange]
//        [--mlp HIDDEN] [--stack] [--both] [--veto F [--veto-code]] [--analyze LANG] [--extra MODEL2]
// Two protocols: (1) gold, two folds of every pair's half a (split by a hash of the sentence;
// a gold pair stays whole): train on one fold of all six pairs, evaluate the other, average;
// (2) no gold: trained on the parallel sets of xling scorer train --parallel (2,000 rows a pair),
// evaluated on every pair's whole half a. Word tables: gold = cross-fitted on the training gold
// pairs (as xling scorer train --bucc without --tables), par = 5,000 other rows of the TSV,
// full = every row of the TSV outside the parallel sets (as --tables). Vectors are cached in --cache.
// It calls the library itself (no xling command): --l2, --k and --prune are the settings l2, k and
// tableMinProb of xling scorer train's --config file (configs/scorer.json), --assignment the setting
// assignment of mine / eval bucc's (configs/scorer-mine.json), each checked as xling checks them.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const flag = (k) => args.includes(k);
const model = args[0];
if (!model || model.startsWith('--') || !opt('--halves')) {
  console.error(
    'usage: node experiments/scorer-tune.mjs MODEL --halves DIR [--parallel TSV] [--cache DIR] [--tables gold|par|full] [--prune P] [--l2 X] [--k K] [--assignment greedy|exchange] [--mlp HIDDEN] [--stack] [--both] [--analyze LANG] [--extra MODEL2]',
  );
  process.exit(2);
}
const halves = opt('--halves'),
  parallel = opt('--parallel', '../shared/data/gettext/train.tsv.gz'),
  C = opt('--cache', 'scorer-tune-cache');
// --extra MODEL2: a second encoder's cosine and ratio margin of each candidate as two more features (its vectors cached in DIR/extra-<name>)
const extraModel = opt('--extra');
const env = {
  TABLES: opt('--tables', 'gold'),
  PRUNE: opt('--prune', '0.05'),
  L2: opt('--l2'),
  K: opt('--k'),
  ASSIGN: opt('--assignment'),
  MLP: opt('--mlp'),
  STACK: flag('--stack') ? '1' : undefined,
  BOTH: flag('--both') ? '1' : undefined,
  ANALYZE: opt('--analyze'),
  VETO: opt('--veto'),
  VETO_CODE: flag('--veto-code') ? '1' : undefined,
};
const D = resolve('dist/src');
// the public entry where it has what is used; the scorer's internals from its module
const X = await import('xling');
const S = await import(`${D}/mine/scorer/index.js`);
try {
  const t = X.scorerTrainSettings(undefined, 'scorer-tune', {
    ...(env.L2 !== undefined && { l2: Number(env.L2) }),
    ...(env.K !== undefined && { k: Number(env.K) }),
    tableMinProb: Number(env.PRUNE),
  });
  env.L2 = String(t.l2);
  env.K = String(t.k);
  env.PRUNE = String(t.tableMinProb);
  env.ASSIGN = X.mineSettings('xling eval bucc', undefined, { where: 'scorer-tune', user: env.ASSIGN ? { assignment: env.ASSIGN } : {} }).assignment;
} catch (e) {
  console.error(e.message);
  process.exit(2);
}
mkdirSync(C, { recursive: true });
if (!existsSync(join(C, 'meta.json'))) {
  const { buccSets, parallelSets } = S;
  const { vectorsFor } = await import(`${D}/cli/vectors.js`);
  const sets = [];
  for (const h of ['a', 'b']) for (const s of await buccSets(halves, h)) sets.push({ ...s, kind: `bucc-${h}` });
  for (const s of await parallelSets(
    parallel,
    ['de', 'fr', 'ja', 'pl', 'ru', 'zh'].map((l) => [l, 'en']),
    2000,
  ))
    sets.push({ ...s, name: `${s.name}.par`, kind: 'parallel' });
  const meta = [];
  for (const s of sets) {
    const sv = vectorsFor(s.src, undefined, model, s.name, { lang: s.srcLang, langFlag: '--src-lang', center: true, label: 'c', quiet: true });
    const tv = vectorsFor(s.trg, undefined, model, s.name, { lang: s.trgLang, langFlag: '--trg-lang', center: true, label: 'c', quiet: true });
    writeFileSync(`${C}/${s.name}.src.f32`, Buffer.from(sv.data.buffer, sv.data.byteOffset, sv.data.byteLength));
    writeFileSync(`${C}/${s.name}.trg.f32`, Buffer.from(tv.data.buffer, tv.data.byteOffset, tv.data.byteLength));
    meta.push({
      name: s.name,
      kind: s.kind,
      srcLang: s.srcLang,
      trgLang: s.trgLang,
      src: s.src,
      trg: s.trg,
      gold: [...s.gold],
      extra: s.extra ?? null,
      d: sv.d,
    });
    console.error(s.name, s.src.length, s.trg.length);
  }
  writeFileSync(`${C}/meta.json`, JSON.stringify(meta));
}
const { trainWordTables, WordAligner } = await import(`${D}/mine/align-features.js`);
const { mineTables } = await import(`${D}/mine/mine.js`);
const { mine, evaluateBucc } = X;
const meta = JSON.parse(readFileSync(`${C}/meta.json`, 'utf8'));
const extra = new Map();
if (extraModel) {
  const E = join(C, `extra-${createHash('sha1').update(resolve(extraModel)).digest('hex').slice(0, 8)}`);
  mkdirSync(E, { recursive: true });
  const { vectorsFor } = await import(`${D}/cli/vectors.js`);
  for (const m of meta) {
    const f = (side) => join(E, `${m.name}.${side}.f32`);
    if (!existsSync(f('trg'))) {
      const sv = vectorsFor(m.src, undefined, extraModel, m.name, { lang: m.srcLang, langFlag: '--src-lang', center: true, label: 'c', quiet: true });
      const tv = vectorsFor(m.trg, undefined, extraModel, m.name, { lang: m.trgLang, langFlag: '--trg-lang', center: true, label: 'c', quiet: true });
      writeFileSync(f('src'), Buffer.from(sv.data.buffer, sv.data.byteOffset, sv.data.byteLength));
      writeFileSync(f('trg'), Buffer.from(tv.data.buffer, tv.data.byteOffset, tv.data.byteLength));
    }
    const r = (side) => {
      const b = readFileSync(f(side));
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    };
    extra.set(m.name, { sv: r('src'), tv: r('trg') });
  }
}
const vec = (n, side) => {
  const b = readFileSync(`${C}/${n}.${side}.f32`);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const K = Number(env.K ?? 4),
  l2 = Number(env.L2 ?? 0.01);
const TABLES = env.TABLES ?? 'gold'; // gold: cross-fitted gold tables (as now); par: tables from the parallel rows (extra)
const sets = new Map(
  meta.map((m) => {
    const x = extra.get(m.name);
    return [m.name, { ...m, gold: new Set(m.gold), sv: vec(m.name, 'src'), tv: vec(m.name, 'trg'), x: x && { ...x, d: x.sv.length / m.src.length } }];
  }),
);
const h1 = (t) => createHash('sha1').update(t).digest()[1] & 1;
const d = meta[0].d;
// the rows idx of vectors v of dimension dd
function rowsOf(v, idx, dd) {
  const o = new Float32Array(idx.length * dd);
  idx.forEach((x, j) => o.set(v.subarray(x * dd, x * dd + dd), j * dd));
  return o;
}
function subset(s, fold) {
  // fold of half a: sources by hash of text, gold targets with their source, others by their own hash
  const gs = new Map([...s.gold].map((g) => g.split('\t').map(Number)).map(([a, b]) => [b, a]));
  const si = s.src.map((_, i) => i).filter((i) => h1(s.src[i]) === fold);
  const ti = s.trg.map((_, i) => i).filter((i) => h1(gs.has(i) ? s.src[gs.get(i)] : s.trg[i]) === fold);
  const sm = new Map(si.map((x, j) => [x, j])),
    tm = new Map(ti.map((x, j) => [x, j]));
  const gold = new Set(
    [...s.gold]
      .map((g) => g.split('\t').map(Number))
      .filter(([a, b]) => sm.has(a) && tm.has(b))
      .map(([a, b]) => `${sm.get(a)}\t${tm.get(b)}`),
  );
  const g = (v, idx) => rowsOf(v, idx, d);
  const x = s.x && { sv: rowsOf(s.x.sv, si, s.x.d), tv: rowsOf(s.x.tv, ti, s.x.d), d: s.x.d };
  return { ...s, name: `${s.name}${fold}`, src: si.map((i) => s.src[i]), trg: ti.map((i) => s.trg[i]), gold, sv: g(s.sv, si), tv: g(s.tv, ti), x };
}
const parOf = (lang) => sets.get(`${lang}-en.par`);
let fullRows = null;
if (TABLES === 'full') {
  const { rows } = await X.loadNWayTsv(parallel);
  fullRows = (l) => {
    const p = parOf(l),
      seen = new Set(p.src);
    return rows
      .filter((r) => r.get(l) && r.get('en') && !seen.has(r.get(l)))
      .slice(0, Number(env.FULLN ?? 1e9))
      .map((r) => [r.get(l), r.get('en')]);
  };
}
const tableCache = new Map();
function tablesFrom(pairs, key) {
  if (!tableCache.has(key)) {
    const t = trainWordTables(pairs, { minProb: Number(env.PRUNE) });
    tableCache.set(key, t);
  }
  return tableCache.get(key);
}
const goldText = (s) => [...s.gold].map((g) => g.split('\t').map(Number)).map(([a, b]) => [s.src[a], s.trg[b]]);
// candidates of a set; training: tables cross-fitted (gold) / parallel extra; eval: tables given
function cands(s, mode, evalTables) {
  const { fwd, bwd } = mineTables(s.sv, s.tv, d, { k: K, chunk: 16384 });
  let al;
  if (TABLES === 'full') al = new WordAligner(tablesFrom(fullRows(s.srcLang), `full:${s.srcLang}`));
  else if (TABLES === 'par' || s.extra) al = new WordAligner(tablesFrom(parOf(s.srcLang).extra, `par:${s.srcLang}`));
  else if (mode === 'train') {
    const gp = [...s.gold].map((g) => g.split('\t').map(Number));
    const folds = [0, 1].map(
      (f) =>
        new WordAligner(
          trainWordTables(
            gp.filter(([a]) => a % 2 !== f).map(([a, b]) => [s.src[a], s.trg[b]]),
            { minProb: Number(env.PRUNE) },
          ),
        ),
    );
    al = (x) => folds[x % 2];
  } else al = new WordAligner(evalTables);
  const c = S.candidatePairs(fwd, bwd, s.src, s.trg, al);
  if (s.x) {
    // the second encoder: cosine and ratio margin (its own k-NN neighbourhoods, both directions)
    const { sv, tv, d: dx } = s.x;
    const t2 = mineTables(sv, tv, dx, { k: K, chunk: 16384 });
    const nb = (tab, n) =>
      Float32Array.from({ length: n }, (_, i) => {
        let a = 0;
        for (let j = 0; j < K; j++) a += tab.distances[i * K + j];
        return a / K;
      });
    const rs = nb(t2.fwd, s.src.length),
      rt = nb(t2.bwd, s.trg.length);
    for (const x of c) {
      let cos = 0;
      for (let j = 0; j < dx; j++) cos += sv[x.src * dx + j] * tv[x.trg * dx + j];
      x.features.push(cos, cos / ((rs[x.src] + rt[x.trg]) / 2));
    }
  }
  return { c, y: c.map((x) => (s.gold.has(`${x.src}\t${x.trg}`) ? 1 : 0)) };
}
function f1Of(sel, s) {
  return evaluateBucc(
    sel.map((c) => ({ src: String(c.src), trg: String(c.trg), score: c.prob ?? c.score })),
    new Set([...s.gold]),
  ).f1;
}
function fit(train) {
  const X = [],
    Y = [];
  for (const t of train) {
    X.push(...t.c);
    Y.push(...t.y);
  }
  const m = extraModel
    ? S.fitLogistic(
        X.map((c) => c.features),
        Y,
        { l2 },
      )
    : S.trainScorer(X, Y, K, {}, { l2 });
  if (env.STACK) m.stage2 = fitStacked(train);
  if (env.MLP) {
    const f = fitMlp(
      X.map((c) => c.features),
      Y,
      { hidden: Number(env.MLP), epochs: Number(env.EPOCHS ?? 30) },
    );
    m.mlp = f;
  }
  return m;
}
// stacking: stage 2 over stage 1's probability and its gaps to each side's best other candidate
const logit = (p) => Math.log(Math.max(p, 1e-9) / Math.max(1 - p, 1e-9));
function stage2Feats(c, probs) {
  const bs = new Map(),
    bt = new Map();
  const top2 = (m, k, v) => {
    const e = m.get(k) ?? [-1, -1];
    if (v > e[0]) {
      e[1] = e[0];
      e[0] = v;
    } else if (v > e[1]) e[1] = v;
    m.set(k, e);
  };
  c.forEach((x, i) => {
    top2(bs, x.src, probs[i]);
    top2(bt, x.trg, probs[i]);
  });
  return c.map((x, i) => {
    const p = probs[i],
      os = bs.get(x.src),
      ot = bt.get(x.trg);
    const oS = p === os[0] ? os[1] : os[0],
      oT = p === ot[0] ? ot[1] : ot[0];
    return [logit(p), p - Math.max(oS, 0), p - Math.max(oT, 0), oS < 0 ? 1 : 0, oT < 0 ? 1 : 0, x.features[1]];
  });
}
function fitStacked(train) {
  // out-of-fold stage-1 probabilities: leave one set out
  const X2 = [],
    Y2 = [];
  train.forEach((t, i) => {
    const m1 = S.trainScorer(
      train.filter((_, j) => j !== i).flatMap((u) => u.c),
      train.filter((_, j) => j !== i).flatMap((u) => u.y),
      K,
      {},
      { l2 },
    );
    const f2 = stage2Feats(
      t.c,
      t.c.map((x) => origScore(m1, x.features)),
    );
    X2.push(...f2);
    Y2.push(...t.y);
  });
  const m2 = S.fitLogistic(X2, Y2, { l2 });
  return m2;
}
const origScore = S.scoreCandidate;
const scoreOf = (m, f) => (m.mlp ? m.mlp(f) : origScore(m, f));
function select(c, m) {
  let probs = c.map((x) => scoreOf(m, x.features));
  if (m.stage2) {
    const f2 = stage2Feats(c, probs);
    const z = m.stage2;
    probs = f2.map((f) => {
      let v = z.bias;
      f.forEach((x, j) => {
        v += (z.weights[j] * (x - z.mean[j])) / z.std[j];
      });
      return 1 / (1 + Math.exp(-v));
    });
  }
  if (env.VETO) {
    // a number or name one side has and the other lacks: the probability times VETO
    const nm = S.FEATURES.indexOf('numbers_mismatch'),
      cm = S.FEATURES.indexOf('code_missing');
    probs = probs.map((p, i) => (c[i].features[nm] > 0 || (env.VETO_CODE && c[i].features[cm] > 0) ? p * Number(env.VETO) : p));
  }
  const scored = c.map((x, i) => ({ src: x.src, trg: x.trg, prob: probs[i], margin: x.margin, cos: x.cos }));
  if (!S.assignOneToOne) {
    // a dist/ from before assignOneToOne (main at d357692): its selectByScorer's greedy one-to-one
    const used = [new Set(), new Set()];
    return scored
      .sort((a, b) => b.prob - a.prob || b.margin - a.margin || a.src - b.src || a.trg - b.trg)
      .filter((c) => !used[0].has(c.src) && !used[1].has(c.trg) && used[0].add(c.src) && used[1].add(c.trg));
  }
  return S.assignOneToOne(scored, env.ASSIGN ?? 'greedy');
}
const langs = ['de', 'fr', 'ja', 'pl', 'ru', 'zh'];
const pct = (x) => (100 * x).toFixed(1);
const res = {};
const final = env.FINAL === '1';
if (!final && !env.ANALYZE && !env.PRINTW) {
  // protocol 1 (gold, 2-fold within half a): train on fold f of every pair's half a, evaluate fold 1-f
  const A = langs.map((l) => sets.get(`${l}-en.a`));
  const folds = [0, 1].map((f) => A.map((s) => subset(s, f)));
  for (const f of [0, 1]) {
    const tr = folds[f].map((s) => cands(s, 'train'));
    if (env.BOTH) tr.push(...langs.map((l) => cands(parOf(l), 'train')));
    const m = fit(tr);
    folds[1 - f].forEach((s, i) => {
      const tabs = tablesFrom(goldText(folds[f][i]), `gold:${s.srcLang}:${f}`);
      const e = cands(s, 'eval', tabs);
      const sel = select(e.c, m);
      const mg = mine(s.sv, s.tv, d, { k: K, margin: 'ratio', retrieval: 'max' });
      res[s.srcLang] ??= { margin: [], gold: [], par: [] };
      res[s.srcLang].margin.push(f1Of(mg, s));
      res[s.srcLang].gold.push(f1Of(sel, s));
    });
  }
  // protocol 2 (no gold): trained on the parallel sets, evaluated on every pair's whole half a
  const P = langs.map((l) => cands(parOf(l), 'train'));
  const mp = fit(P);
  for (const l of langs) {
    const s = sets.get(`${l}-en.a`);
    const e = cands(s, 'eval', tablesFrom(parOf(l).extra, `par:${l}`));
    res[l].par.push(f1Of(select(e.c, mp), s));
    res[l].marginA = f1Of(mine(s.sv, s.tv, d, { k: K, margin: 'ratio', retrieval: 'max' }), s);
    if (s.x) {
      // margin alone with the second encoder, and with both (concatenated, each scaled by 1/√2: the mean of the two cosines)
      const both = (u, v, n) => {
        const dx = s.x.d,
          o = new Float32Array(n * (d + dx));
        for (let i = 0; i < n; i++) {
          o.set(u.subarray(i * d, i * d + d), i * (d + dx));
          o.set(v.subarray(i * dx, i * dx + dx), i * (d + dx) + d);
        }
        return o.map((z) => z * Math.SQRT1_2);
      };
      res[l].marginX = f1Of(mine(s.x.sv, s.x.tv, s.x.d, { k: K, margin: 'ratio', retrieval: 'max' }), s);
      res[l].marginXY = f1Of(
        mine(both(s.sv, s.x.sv, s.src.length), both(s.tv, s.x.tv, s.trg.length), d + s.x.d, { k: K, margin: 'ratio', retrieval: 'max' }),
        s,
      );
    }
  }
  if (extraModel)
    console.log(
      `margin (half a) with the second encoder: ${langs.map((l) => `${l} ${pct(res[l].marginX)}`).join(', ')}, mean ${pct(langs.reduce((a, l) => a + res[l].marginX, 0) / langs.length)}; with both: ${langs.map((l) => `${l} ${pct(res[l].marginXY)}`).join(', ')}, mean ${pct(langs.reduce((a, l) => a + res[l].marginXY, 0) / langs.length)}`,
    );
  const avg = (a) => a.reduce((x, y) => x + y, 0) / a.length;
  console.log(`${args.slice(1).join(' ')}\npair | margin (2 folds) | scorer gold (2 folds) | margin (half a) | scorer parallel (half a)`);
  const tot = { m: [], g: [], ma: [], p: [] };
  for (const l of langs) {
    const r = res[l];
    tot.m.push(avg(r.margin));
    tot.g.push(avg(r.gold));
    tot.ma.push(r.marginA);
    tot.p.push(r.par[0]);
    console.log(`${l} | ${pct(avg(r.margin))} | ${pct(avg(r.gold))} | ${pct(r.marginA)} | ${pct(r.par[0])}`);
  }
  console.log(`mean | ${pct(avg(tot.m))} | ${pct(avg(tot.g))} | ${pct(avg(tot.ma))} | ${pct(avg(tot.p))}`);
}
if (env.ANALYZE) {
  const P = langs.map((l) => cands(parOf(l), 'train'));
  const mp = fit(P);
  const s = sets.get(`${env.ANALYZE}-en.a`);
  const e = cands(s, 'eval', tablesFrom(parOf(env.ANALYZE).extra, `par:${env.ANALYZE}`));
  const sel = select(e.c, mp);
  const r = evaluateBucc(
    sel.map((c) => ({ src: String(c.src), trg: String(c.trg), score: c.prob })),
    new Set([...s.gold]),
  );
  console.log('F1', r.f1, 'thr', r.threshold);
  const gT = new Map([...s.gold].map((g) => g.split('\t').map(Number)).map(([a, b]) => [b, a]));
  const gS = new Map([...s.gold].map((g) => g.split('\t').map(Number)));
  const acc = sel.filter((c) => c.prob >= r.threshold);
  const accS = new Set(acc.map((c) => `${c.src}\t${c.trg}`));
  console.log('--- false positives');
  for (const c of acc)
    if (!s.gold.has(`${c.src}\t${c.trg}`)) {
      console.log(`${c.prob.toFixed(3)} m${c.margin.toFixed(3)} | ${s.src[c.src]} || ${s.trg[c.trg]}`);
      if (gS.has(c.src)) console.log(`     src's gold trg: ${s.trg[gS.get(c.src)]}`);
      if (gT.has(c.trg)) console.log(`     trg's gold src: ${s.src[gT.get(c.trg)]}`);
    }
  console.log('--- missed');
  const byPair = new Map(e.c.map((c) => [`${c.src}\t${c.trg}`, S.scoreCandidate(mp, c.features)]));
  for (const g of s.gold)
    if (!accS.has(g)) {
      const [a, b] = g.split('\t').map(Number);
      console.log(`${(byPair.get(g) ?? -1).toFixed(3)} | ${s.src[a]} || ${s.trg[b]}`);
    }
}
if (env.PRINTW) {
  const P = env.PRINTW === 'par' ? langs.map((l) => cands(parOf(l), 'train')) : langs.map((l) => cands(sets.get(`${l}-en.a`), 'train'));
  const m = fit(P);
  const X = P.flatMap((t) => t.c),
    Y = P.flatMap((t) => t.y);
  m.features.forEach((f, i) => {
    const pos = X.filter((_, j) => Y[j]).map((c) => c.features[i]),
      neg = X.filter((_, j) => !Y[j]).map((c) => c.features[i]);
    const mu = (a) => (a.reduce((x, y) => x + y, 0) / a.length).toFixed(3);
    console.log(f.padEnd(22), m.weights[i].toFixed(3), 'pos', mu(pos), 'neg', mu(neg));
  });
}

// a small MLP (one hidden ReLU layer) by Adam on standardised features; deterministic
function fitMlp(X, Y, o = {}) {
  const H = o.hidden ?? 32,
    epochs = o.epochs ?? 40,
    lr = o.lr ?? 3e-3,
    l2 = o.l2 ?? 1e-4,
    B = o.batch ?? 128;
  const n = X.length,
    d = X[0].length;
  const mean = Array.from({ length: d }, (_, j) => X.reduce((a, r) => a + r[j], 0) / n);
  const std = Array.from({ length: d }, (_, j) => {
    const v = X.reduce((a, r) => a + (r[j] - mean[j]) ** 2, 0) / n;
    return v > 1e-12 ? Math.sqrt(v) : 1;
  });
  const Z = X.map((r) => Float64Array.from(r, (v, j) => (v - mean[j]) / std[j]));
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const gauss = () => Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
  const W1 = Float64Array.from({ length: H * d }, () => gauss() * Math.sqrt(2 / d)),
    b1 = new Float64Array(H);
  const W2 = Float64Array.from({ length: H }, () => gauss() * Math.sqrt(1 / H));
  let b2 = 0;
  const P = [W1, b1, W2],
    m = P.map((p) => new Float64Array(p.length)),
    v = P.map((p) => new Float64Array(p.length));
  let mb2 = 0,
    vb2 = 0;
  const g = P.map((p) => new Float64Array(p.length));
  let gb2 = 0;
  const idx = Array.from({ length: n }, (_, i) => i);
  let t = 0;
  const h = new Float64Array(H);
  for (let ep = 0; ep < epochs; ep++) {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [idx[i], idx[j]] = [idx[j], idx[i]];
    }
    for (let s = 0; s < n; s += B) {
      g.forEach((a) => a.fill(0));
      gb2 = 0;
      const e = Math.min(n, s + B);
      for (let q = s; q < e; q++) {
        const z = Z[idx[q]],
          y = Y[idx[q]];
        let o2 = b2;
        for (let k = 0; k < H; k++) {
          let a = b1[k];
          for (let j = 0; j < d; j++) a += W1[k * d + j] * z[j];
          h[k] = Math.max(a, 0);
          o2 += W2[k] * h[k];
        }
        const p = 1 / (1 + Math.exp(-o2)),
          r = p - y;
        gb2 += r;
        for (let k = 0; k < H; k++) {
          g[2][k] += r * h[k];
          if (h[k] > 0) {
            const rk = r * W2[k];
            g[1][k] += rk;
            for (let j = 0; j < d; j++) g[0][k * d + j] += rk * z[j];
          }
        }
      }
      const bs = e - s;
      t++;
      const c1 = 1 - 0.9 ** t,
        c2 = 1 - 0.999 ** t;
      P.forEach((p, pi) => {
        for (let i = 0; i < p.length; i++) {
          const gi = g[pi][i] / bs + (pi !== 1 ? l2 * p[i] : 0);
          m[pi][i] = 0.9 * m[pi][i] + 0.1 * gi;
          v[pi][i] = 0.999 * v[pi][i] + 0.001 * gi * gi;
          p[i] -= (lr * (m[pi][i] / c1)) / (Math.sqrt(v[pi][i] / c2) + 1e-8);
        }
      });
      const gi = gb2 / bs;
      mb2 = 0.9 * mb2 + 0.1 * gi;
      vb2 = 0.999 * vb2 + 0.001 * gi * gi;
      b2 -= (lr * (mb2 / c1)) / (Math.sqrt(vb2 / c2) + 1e-8);
    }
  }
  return (f) => {
    let o2 = b2;
    for (let k = 0; k < H; k++) {
      let a = b1[k];
      for (let j = 0; j < d; j++) a += (W1[k * d + j] * (f[j] - mean[j])) / std[j];
      if (a > 0) o2 += W2[k] * a;
    }
    return 1 / (1 + Math.exp(-o2));
  };
}
