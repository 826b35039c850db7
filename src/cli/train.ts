// xling train: a LASER-style multilingual encoder from an N-way parallel TSV.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { saveModelDir } from '../embed/model-dir.js';
import { fitLanguageMeans } from '../embed/centering.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { setNumThreads } from '../tensor/tensor.js';
import { Tokenizer } from '../text/tokenizer.js';
import { loadConfig } from '../train/config.js';
import { devSetOf, encodeTable, loadTable } from '../train/prepare.js';
import { trainLaser } from '../train/trainer.js';
import { xsimOnDev } from '../train/validate.js';
import { command } from './command.js';

export const trainCommand = command(['train'], {
  name: 'xling train',
  summary: 'train a LASER-style multilingual sentence encoder',
  options: {
    config: { type: 'string', required: true, metavar: 'FILE', help: 'training configuration (JSON, see configs/)' },
    data: { type: 'string', required: true, metavar: 'TSV', help: 'N-way parallel TSV(.gz): header of language codes, empty cell = missing' },
    out: { type: 'string', required: true, metavar: 'DIR', help: 'model directory to write (config.json, model.safetensors, tokenizer.json)' },
    dev: { type: 'string', metavar: 'TSV', help: 'dev TSV for the similarity-search error (validation)' },
    resume: { type: 'boolean', default: false, help: 'continue from DIR/checkpoint' },
    threads: { type: 'number', help: 'intra-op threads (default: all cores)' },
    budgetPairs: { type: 'number', help: 'override budget.pairs' },
    budgetMinutes: { type: 'number', help: 'override budget.minutes' },
  },
  examples: ['xling train --config configs/laser-16k-pairs.json --data ../shared/data/gettext/train.tsv.gz --out runs/laser'],
}, async (a) => {
  if (a.threads) setNumThreads(a.threads);
  const cfg = loadConfig(a.config);
  if (a.budgetPairs !== undefined || a.budgetMinutes !== undefined) cfg.budget = { pairs: a.budgetPairs ?? 0, minutes: a.budgetMinutes ?? 0 };
  if (!existsSync(a.data)) throw new Error(`--data: no such file ${a.data}`);
  mkdirSync(a.out, { recursive: true });
  const log = (l: string) => process.stderr.write(`[train] ${l}\n`);
  const table = await loadTable(a.data);
  log(`${table.rows.length} rows, ${table.langs.length} languages`);
  const tokFile = join(a.out, 'tokenizer.json');
  let tok: Tokenizer;
  if (existsSync(tokFile) && a.resume) {
    tok = Tokenizer.load(tokFile, { romanize: cfg.vocab.romanize });
  } else {
    const byLang = new Map<string, string[]>(table.langs.map((l) => [l, table.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
    const t0 = performance.now();
    tok = Tokenizer.train(byLang, { model: cfg.vocab.type, vocabSize: cfg.vocab.size, temperature: cfg.vocab.temperature, seed: cfg.seed, maxLen: cfg.maxLen, sampleSentences: cfg.vocab.sampleSentences, normalize: { lowercase: cfg.vocab.lowercase, romanize: cfg.vocab.romanize } });
    tok.save(tokFile);
    log(`joint ${cfg.vocab.type === "unigram" ? "unigram" : "BPE"} vocabulary of ${tok.vocabSize} trained in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
  }
  const t1 = performance.now();
  const corpus = encodeTable(table, tok);
  log(`encoded in ${((performance.now() - t1) / 1000).toFixed(1)}s`);
  const devTable = a.dev ? await loadTable(a.dev) : null;
  const dev = devTable ? devSetOf(devTable, cfg.validate.langs, 200, cfg.validate.maxRows) : undefined;
  const { model } = await trainLaser({ config: cfg, corpus, tokenizer: tok, outDir: a.out, resume: a.resume, dev, log });
  const enc = new SentenceEncoderModel(model.encoder, tok, cfg);
  if (cfg.center.perLang > 0) {
    const t2 = performance.now();
    const byLang = new Map<string, string[]>(table.langs.map((l) => [l, table.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
    enc.centers = fitLanguageMeans(enc, byLang, cfg.center.perLang, cfg.seed);
    log(`per-language mean vectors (${enc.centers.size} languages, ≤ ${cfg.center.perLang} sentences each) in ${((performance.now() - t2) / 1000).toFixed(1)}s`);
  }
  saveModelDir(a.out, model, tokFile, cfg, enc.centers);
  log(`model written to ${a.out}`);
  if (dev) {
    const raw = xsimOnDev(enc, dev, { center: false });
    const centered = enc.centers.size ? xsimOnDev(enc, dev) : null;
    writeFileSync(join(a.out, 'dev-xsim.json'), JSON.stringify({ ...raw, centered }, null, 1) + '\n');
    const n = Object.keys(raw.langs).length;
    log(`dev similarity-search error (avg X→en, en→X over ${n} languages): ${raw.average.toFixed(2)}%` + (centered ? `; with per-language centring (embed --lang): ${centered.average.toFixed(2)}%` : ''));
  }
});
