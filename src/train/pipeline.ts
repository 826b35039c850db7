// From an N-way parallel TSV to a model directory, for any model family: text features (a trained
// subword vocabulary, or the family's own), token ids, the training loop, per-language means, the
// model files and the dev error. The model is built in OUT.partial and swapped in at the end, so
// OUT only ever holds one consistent model; a killed run resumes from OUT.partial.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fitLanguageMeans } from '../embed/centering.js';
import { CENTER_MIN_NORM, trainModelIdentifier } from '../embed/language.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { checkReplaceable, replaceDir, writeModelFiles } from '../embed/model-dir.js';
import { TrainConfig } from '../models/family.js';
import { getFamily } from '../models/registry.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { Tokenizer } from '../text/tokenizer.js';
import { Progress } from '../util/progress.js';
import { heatmap } from '../util/svg.js';
import { LangVectors, xsimMatrix } from '../eval/xsim-matrix.js';
import { readLines } from '../io/lines.js';
import { devSetOf, encodeTable, loadTable, NWayTable } from './prepare.js';
import { hasCheckpoint, train, TrainLogEntry } from './trainer.js';
import { xsimOnDev, XsimResult } from './validate.js';

export interface TrainModelOptions {
  /** A parsed, validated configuration (loadConfig / parseConfig). */
  config: TrainConfig;
  /** N-way parallel TSV(.gz). */
  data: string;
  /** Dev TSV for the similarity-search error (during and after training). */
  dev?: string;
  /** The model directory to write. */
  out: string;
  /** Continue a killed run (OUT.partial) or a finished one (OUT); 'or-start': start when there is none. */
  resume?: boolean | 'or-start';
  /** Languages (TSV columns) left out of training. */
  excludeLangs?: string[];
  /** Monolingual text files ([lang, path]): one sentence per line, added as rows with that language only. */
  mono?: [string, string][];
  log?: (line: string) => void;
  quiet?: boolean;
}

export interface TrainModelResult {
  dir: string;
  log: TrainLogEntry[];
  dev?: { raw: XsimResult; centered: XsimResult | null };
}

/** Settings that do not change the model (a resume may change them). */
const RUN_ONLY = new Set(['budget', 'validate', 'logEvery', 'checkpointEvery', 'checkpointMinutes', 'center']);

/** What a checkpoint must have been made with: the tokenizer's hash and the model-defining settings. */
export function fingerprintOf(cfg: TrainConfig, tokenizerText: string): string {
  const modelDefining = Object.fromEntries(Object.entries(cfg).filter(([k]) => !RUN_ONLY.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash('sha256').update(tokenizerText).update('\0').update(JSON.stringify(modelDefining)).digest('hex').slice(0, 16);
}

/** The similarity-search error between every pair of dev languages, as `xling eval xsim --svg` draws it. */
function devHeatmap(enc: SentenceEncoderModel, dev: NWayTable, langs: string[]): string {
  const per: LangVectors[] = langs.map((l) => {
    const rows: number[] = [], texts: string[] = [];
    dev.rows.forEach((r, i) => { const s = r.get(l); if (s) { rows.push(i); texts.push(s); } });
    return { lang: l, rows, texts, vecs: enc.embed(texts, { lang: l }) };
  });
  const m = xsimMatrix(per, enc.dim, 'index', 100);
  return heatmap({ rows: m.langs, cols: m.langs, values: m.errors, title: `Dev similarity-search error (%) — overall ${m.overall.toFixed(1)}%`, colors: 'reds', min: 0, max: 100 });
}

function byLanguage(table: NWayTable): Map<string, string[]> {
  return new Map(table.langs.map((l) => [l, table.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
}

export async function trainModel(o: TrainModelOptions): Promise<TrainModelResult> {
  const t0 = performance.now();
  const cfg = o.config;
  const log = o.log ?? ((l: string) => process.stderr.write(`[train] ${l}\n`));
  const family = getFamily(cfg.model);
  if (!existsSync(o.data)) throw new Error(`--data: no such file ${o.data}`);
  if (o.dev && !existsSync(o.dev)) throw new Error(`--dev: no such file ${o.dev}`);
  for (const [lang, file] of o.mono ?? []) {
    if (!/^[a-z]{2,3}(_[a-z]{2,4})?$/i.test(lang)) throw new Error(`--mono: '${lang}' is not a language code (give LANG=FILE)`);
    if (!existsSync(file)) throw new Error(`--mono: no such file ${file}`);
  }
  checkReplaceable(o.out, '--out');
  // the inputs are read before anything is written: bad data leaves no work directory behind
  const table = await loadTable(o.data);
  if (o.excludeLangs?.length) {
    for (const l of o.excludeLangs) if (!table.langs.includes(l)) throw new Error(`--exclude-langs: '${l}' is not a column of ${o.data}`);
    table.langs = table.langs.filter((l) => !o.excludeLangs!.includes(l));
    for (const r of table.rows) for (const l of o.excludeLangs) r.delete(l);
  }
  for (const [lang, file] of o.mono ?? []) {
    if (!table.langs.includes(lang)) table.langs.push(lang);
    let n = 0;
    for await (const { line } of readLines(file, { maxChars: 20000 })) if (line.trim()) { table.rows.push(new Map([[lang, line]])); n++; }
    log(`--mono ${lang}: ${n} sentences from ${file}`);
  }
  const devTable = o.dev ? await loadTable(o.dev) : null;
  const work = `${o.out}.partial`;
  let resume = false;
  if (o.resume) {
    if (hasCheckpoint(work)) {
      resume = true;
    } else if (hasCheckpoint(o.out)) {
      // continue a finished model (e.g. with a larger budget): work on a copy, swap at the end
      rmSync(work, { recursive: true, force: true });
      cpSync(o.out, work, { recursive: true });
      resume = true;
    } else if (o.resume !== 'or-start') {
      throw new Error(`--resume: no checkpoint in ${work} or ${o.out} (train without --resume to start a new model, or use --resume-or-start)`);
    } else {
      log(`no checkpoint in ${work} or ${o.out}: starting a new model`);
    }
  }
  if (!resume) { rmSync(work, { recursive: true, force: true }); mkdirSync(work, { recursive: true }); }
  log(`${table.rows.length} rows, ${table.langs.length} languages`);

  // text → ids: the family's own features, or a subword vocabulary trained here (kept on resume)
  let tok: TextTokenizer, tokFile: string | null = null, tokText: string;
  const fixed = family.fixedTokenizer?.(cfg);
  if (fixed) {
    tok = fixed;
    tokText = JSON.stringify(fixed);
  } else {
    tokFile = 'tokenizer.json';
    const path = join(work, tokFile);
    if (resume && existsSync(path)) {
      tok = Tokenizer.load(path, { romanize: cfg.vocab.romanize });
    } else {
      const t1 = performance.now();
      const trained = Tokenizer.train(byLanguage(table), { model: cfg.vocab.type === 'none' ? 'bpe' : cfg.vocab.type, vocabSize: cfg.vocab.size, temperature: cfg.vocab.temperature, seed: cfg.seed, maxLen: cfg.maxLen, sampleSentences: cfg.vocab.sampleSentences, normalize: { lowercase: cfg.vocab.lowercase, romanize: cfg.vocab.romanize } });
      trained.save(path);
      tok = trained;
      log(`joint ${({ bpe: 'BPE', unigram: 'unigram', words: 'word', none: '' })[cfg.vocab.type]} vocabulary of ${trained.vocabSize} trained in ${((performance.now() - t1) / 1000).toFixed(1)}s`);
    }
    tokText = readFileSync(path, 'utf8');
  }
  const t2 = performance.now();
  const corpus = encodeTable(table, tok);
  log(`text features of ${table.langs.length} languages in ${((performance.now() - t2) / 1000).toFixed(1)}s`);
  const dev = devTable ? devSetOf(devTable, cfg.validate.langs, 200, cfg.validate.maxRows) : undefined;
  const prepSeconds = (performance.now() - t0) / 1000;

  const { task, log: history } = await train({ config: cfg, corpus, tokenizer: tok, outDir: work, resume, dev, log, priorSeconds: prepSeconds, fingerprint: fingerprintOf(cfg, tokText) });
  try {
    const enc = new SentenceEncoderModel(task.encoder(), tok);
    if (cfg.center.perLang > 0) {
      const langs = byLanguage(table);
      const total = [...langs.values()].reduce((a, s) => a + Math.min(s.length, cfg.center.perLang), 0);
      const prog = new Progress({ label: 'per-language mean vectors', unit: 'sents', total, silent: o.quiet });
      enc.centers = fitLanguageMeans(enc, langs, cfg.center.perLang, cfg.seed, (n) => prog.tick(n));
      prog.done();
    }
    writeModelFiles(work, cfg.model, task, cfg, tokFile, enc.centers);
    // the language identifier (lid.json) of the corpus's languages: centring's 'auto'
    const t3 = performance.now();
    enc.lid = trainModelIdentifier(byLanguage(table));
    if (enc.lid) {
      enc.lid.save(work);
      log(`language identifier of ${enc.lid.languages.length} languages (${enc.lid.features} character n-grams) trained in ${((performance.now() - t3) / 1000).toFixed(1)}s`);
    }
    const mv = enc.meanVectors;
    if (mv.negligible) log(`the per-language mean vectors are too small to matter (mean norm ${mv.meanNorm.toFixed(3)} < ${CENTER_MIN_NORM}): embedding does not centre by default`);
    let devResult: TrainModelResult['dev'];
    if (dev) {
      const raw = xsimOnDev(enc, dev, { center: false });
      const centered = enc.centers.size ? xsimOnDev(enc, dev, { center: 'force' }) : null;
      writeFileSync(join(work, 'dev-xsim.json'), JSON.stringify({ ...raw, centered }, null, 1) + '\n');
      writeFileSync(join(work, 'dev-xsim.svg'), devHeatmap(enc, devTable!, ['en', ...Object.keys(raw.langs)]));
      const n = Object.keys(raw.langs).length;
      log(`dev similarity-search error (avg X→en, en→X over ${n} languages): ${raw.average.toFixed(2)}%` + (centered ? `; with per-language centring (embed --lang): ${centered.average.toFixed(2)}%` : ''));
      devResult = { raw, centered };
    }
    replaceDir(work, o.out);
    log(`model written to ${o.out}`);
    return { dir: o.out, log: history, dev: devResult };
  } finally {
    task.dispose?.();
    task.module.dispose();
  }
}
