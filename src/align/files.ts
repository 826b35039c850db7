// Aligning document files (xling align): documents of one sentence per line (vecalign's input),
// one pair or a list of pairs (`src<TAB>trg[<TAB>out_name]` a line), written as a TSV of
// cost, src_ids, trg_ids, src_text, trg_text (ids 0-based line numbers, comma-joined) or in
// vecalign's own `[0, 1]:[2]:0.123456` lines. Every document is read (and refused when empty or
// unreadable) before anything is embedded.
import { basename, dirname, isAbsolute, join } from 'node:path';
import { modelOrDefault } from '../embed/default-model.js';
import { checkLangOption } from '../embed/input.js';
import { loadEncoderForRuntime } from '../embed/portable.js';
import { readLines, shownPath } from '../io/input.js';
import { AlignedGroup, alignSentences, AlignOptions, embedderOf, SentenceEmbedder } from './align.js';
import { vecalignLine } from './score.js';

export type AlignFormat = 'tsv' | 'vecalign';

/** One document pair to align and where its alignment goes; srcWhat / trgWhat name the documents in messages (--src, list.tsv:3: source). */
export interface AlignJob {
  src: string;
  trg: string;
  out: string;
  srcWhat: string;
  trgWhat: string;
}

/** The lines of a document (blank lines kept: line numbers are the ids); an empty document is an error naming `what`. */
export async function readDocument(path: string, what: string): Promise<string[]> {
  const out: string[] = [];
  for await (const { line } of readLines(path)) out.push(line);
  if (!out.length) throw new Error(`${what} ${shownPath(path)}: empty document (no sentences to align)`);
  return out;
}

/** The default name of a pair's output in a --pairs run: the source file's name with .tsv (or .align for vecalign's format). */
export function defaultOutName(src: string, format: AlignFormat): string {
  return `${basename(src).replace(/\.gz$/, '')}${format === 'tsv' ? '.tsv' : '.align'}`;
}

/**
 * The jobs of a pair list: each non-blank line `src<TAB>trg[<TAB>out_name]` (paths relative to
 * the list's folder unless absolute; out_name a file name inside outDir, by default
 * defaultOutName). Errors name the list's line.
 */
export async function readPairList(list: string, outDir: string, format: AlignFormat): Promise<AlignJob[]> {
  const base = dirname(list);
  const jobs: AlignJob[] = [];
  for await (const { line, no } of readLines(list)) {
    if (!line.trim() || line.startsWith('#')) continue;
    const f = line.split('\t');
    const at = `${shownPath(list)}:${no}`;
    if (f.length < 2 || f.length > 3 || !f[0]!.trim() || !f[1]!.trim())
      throw new Error(`${at}: expected src_path<TAB>trg_path[<TAB>out_name], got ${f.length} field${f.length > 1 ? 's' : ''}`);
    const name = f[2]?.trim() || defaultOutName(f[0]!.trim(), format);
    if (name.includes('/') || name === '.' || name === '..')
      throw new Error(`${at}: out_name '${name}' must be a file name (it goes into the output directory)`);
    const path = (p: string) => (isAbsolute(p) ? p : join(base, p));
    jobs.push({ src: path(f[0]!.trim()), trg: path(f[1]!.trim()), out: join(outDir, name), srcWhat: `${at}: source`, trgWhat: `${at}: target` });
  }
  if (!jobs.length) throw new Error(`${shownPath(list)}: no document pairs (lines src_path<TAB>trg_path[<TAB>out_name])`);
  return jobs;
}

const cell = (s: string) => s.replace(/[\t\r\n]+/g, ' ');

/** The TSV header of formatAlignment's tsv format. */
export const TSV_HEADER = 'cost\tsrc_ids\ttrg_ids\tsrc_text\ttrg_text';

/**
 * An alignment as text: 'tsv' (a header, then a row per group; rows with an empty side only when
 * `deletions`) or 'vecalign' (its line format, every group).
 */
export function formatAlignment(
  groups: readonly AlignedGroup[],
  src: readonly string[],
  trg: readonly string[],
  o: { format: AlignFormat; deletions: boolean },
): string {
  if (o.format === 'vecalign') return groups.map((g) => vecalignLine(g) + '\n').join('');
  const rows = [TSV_HEADER];
  for (const g of groups) {
    if (!o.deletions && (!g.src.length || !g.trg.length)) continue;
    rows.push(
      [g.cost.toFixed(6), g.src.join(','), g.trg.join(','), cell(g.src.map((i) => src[i]!).join(' ')), cell(g.trg.map((j) => trg[j]!).join(' '))].join('\t'),
    );
  }
  return rows.join('\n') + '\n';
}

export interface AlignFilesOptions extends AlignOptions {
  srcLang?: string;
  trgLang?: string;
  format: AlignFormat;
  deletions: boolean;
  /** Writes one output (atomically; '-' standard output). */
  write(path: string, text: string): void;
  /** A line of progress per pair. */
  log?(line: string): void;
}

/**
 * Reads every pair's documents (refusing empty ones), then opens the embedder (a model is loaded
 * only for documents that can be aligned; the languages it returns, checked against the model,
 * replace the options') and aligns and writes each pair; the totals.
 */
export async function alignFiles(
  jobs: readonly AlignJob[],
  openEmbedder: () => { embedder: SentenceEmbedder; srcLang?: string; trgLang?: string },
  o: AlignFilesOptions,
): Promise<{ pairs: number; groups: number; deletions: number }> {
  const docs: { src: string[]; trg: string[] }[] = [];
  for (const j of jobs) docs.push({ src: await readDocument(j.src, j.srcWhat), trg: await readDocument(j.trg, j.trgWhat) });
  const opened = openEmbedder(),
    embedder = opened.embedder;
  const opts = { ...o, srcLang: opened.srcLang ?? o.srcLang, trgLang: opened.trgLang ?? o.trgLang };
  let groups = 0,
    deletions = 0;
  for (let k = 0; k < jobs.length; k++) {
    const j = jobs[k]!,
      { src, trg } = docs[k]!;
    const t0 = performance.now();
    for (const [file, sents] of [
      [j.src, src],
      [j.trg, trg],
    ] as const) {
      const cut = embedder.cutOf?.(sents) ?? 0;
      if (cut)
        o.log?.(`warning: ${shownPath(file)}: ${cut} of ${sents.length} lines were longer than the model reads and were cut to its maximum input length`);
    }
    const g = await alignSentences(src, trg, embedder, opts);
    const dels = g.filter((x) => !x.src.length || !x.trg.length).length;
    o.write(j.out, formatAlignment(g, src, trg, o));
    groups += g.length;
    deletions += dels;
    o.log?.(
      `${shownPath(j.src)} ↔ ${shownPath(j.trg)}: ${src.length} × ${trg.length} sentences → ${g.length - dels} groups, ${dels} unaligned sentences, in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${j.out === '-' ? 'standard output' : j.out}`,
    );
  }
  return { pairs: jobs.length, groups, deletions };
}

/**
 * alignFiles' embedder over a model directory (undefined: the package's default model), opened when
 * alignFiles asks (after the documents are read): the model loaded for its runtime and the
 * languages of the two sides (--src-lang, --trg-lang; 'none' when not given) checked against it.
 */
export function modelEmbedder(
  model: string | undefined,
  o: { srcLang?: string; trgLang?: string; center: boolean },
): () => { embedder: SentenceEmbedder; srcLang: string; trgLang: string } {
  return () => {
    const m = loadEncoderForRuntime(modelOrDefault(model));
    const srcLang = checkLangOption(m, o.srcLang, '--src-lang') ?? 'none',
      trgLang = checkLangOption(m, o.trgLang, '--trg-lang') ?? 'none';
    return { embedder: embedderOf(m, { center: o.center }), srcLang, trgLang };
  };
}
