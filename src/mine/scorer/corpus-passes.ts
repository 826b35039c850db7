// A corpus of pairs read in passes (xling scorer score): never held whole, read again for each
// pass — the first checks every line, counts those with both sides and digests them by chunks; each
// later pass must read the same lines (a file changed meanwhile is refused) and gives them one at
// a time or in blocks of pairs. Standard input and pipes are spooled on the first read (readLines).
import { createHash } from 'node:crypto';
import { readLines } from '../../io/lines.js';

/** A pair of the corpus: the line as written back (its score appended), its sides, and with --label-col whether it is good. */
export interface Row {
  line: string;
  src: string;
  trg: string;
  label?: boolean;
}

/** The corpus, read again for each pass (standard input and pipes are spooled on the first: readLines). */
export interface CorpusSource {
  name: string;
  rows(): AsyncGenerator<Row>;
}

/** What the first pass found: the lines, those with both sides, the labels, and the digests of the lines (by chunks of DIGEST_LINES) that later passes must read again. */
export interface Scan {
  n: number;
  full: number;
  label?: Uint8Array;
  digests: string[];
}

/** Lines a digest covers: a later pass notices a changed file within as many lines. */
export const DIGEST_LINES = 8192;

export const hasBothSides = (r: Row) => !!(r.src.trim() && r.trg.trim());

/** --input: the sides (and a label) from columns of each line (0-based); a line with too few columns, or a label not 0 or 1, is refused, naming it. */
export function columnsSource(file: string, sc: number, tc: number, lc?: number): CorpusSource {
  const need = Math.max(sc, tc, lc ?? 0) + 1;
  return {
    name: `--input ${file}`,
    async *rows() {
      let any = false;
      for await (const { line, no } of readLines(file)) {
        const cols = line.split('\t');
        if (cols.length < need)
          throw new Error(
            `${file}:${no}: ${cols.length} tab-separated column${cols.length > 1 ? 's' : ''}, but --src-col ${sc + 1} and --trg-col ${tc + 1}${lc !== undefined ? ` and --label-col ${lc + 1}` : ''} need ${need}`,
          );
        let label: boolean | undefined;
        if (lc !== undefined) {
          const l = cols[lc]!.trim();
          if (l !== '0' && l !== '1') throw new Error(`${file}:${no}: --label-col ${lc + 1} is '${l}', not 1 (a good pair) or 0`);
          label = l === '1';
        }
        any = true;
        yield { line, src: cols[sc]!, trg: cols[tc]!, label };
      }
      if (!any) throw new Error(`${file}: empty`);
    },
  };
}

/** --src and --trg: line i of each is pair i; files of different lengths are refused. */
export function alignedSource(srcFile: string, trgFile: string): CorpusSource {
  return {
    name: `--src ${srcFile} / --trg ${trgFile}`,
    async *rows() {
      const si = readLines(srcFile),
        ti = readLines(trgFile);
      let n = 0;
      for (;;) {
        const [x, y] = await Promise.all([si.next(), ti.next()]);
        if (x.done || y.done) {
          if (x.done !== y.done) {
            // the rest of the longer file counted, for the message
            let more = 1;
            for (let r = await (x.done ? ti : si).next(); !r.done; r = await (x.done ? ti : si).next()) more++;
            const [ns, nt] = x.done ? [n, n + more] : [n + more, n];
            throw new Error(`--src ${srcFile} has ${ns} lines but --trg ${trgFile} has ${nt}: the files must be aligned line by line`);
          }
          break;
        }
        n++;
        yield { line: `${x.value.line}\t${y.value.line}`, src: x.value.line, trg: y.value.line };
      }
      if (!n) throw new Error(`--src ${srcFile}: empty`);
    },
  };
}

/** The first pass: every line checked (columns, labels) and counted, the labels kept, the lines' digest. */
export async function scanCorpus(source: CorpusSource): Promise<Scan> {
  const digests: string[] = [];
  let h = createHash('sha256');
  let n = 0,
    full = 0,
    label: Uint8Array | undefined;
  for await (const r of source.rows()) {
    h.update(r.line).update('\n');
    if ((n + 1) % DIGEST_LINES === 0) {
      digests.push(h.digest('hex'));
      h = createHash('sha256');
    }
    if (r.label !== undefined) {
      if (!label) label = new Uint8Array(1024);
      if (n >= label.length) {
        const l = new Uint8Array(2 * label.length);
        l.set(label);
        label = l;
      }
      label[n] = r.label ? 1 : 0;
    }
    if (hasBothSides(r)) full++;
    n++;
  }
  if (n % DIGEST_LINES) digests.push(h.digest('hex'));
  return { n, full, digests, ...(label ? { label: label.subarray(0, n) } : {}) };
}

/** The lines read again with their numbers (0-based); the read must give the first pass's lines (a file changed meanwhile is refused). */
export async function* linesOf(source: CorpusSource, scan: Scan): AsyncGenerator<{ i: number; line: string; row: Row }> {
  const changed = () => new Error(`${source.name}: changed while it was being scored (read again, its lines differ from the first reading)`);
  let h = createHash('sha256');
  let i = 0;
  for await (const row of source.rows()) {
    if (i >= scan.n) throw changed();
    h.update(row.line).update('\n');
    // each chunk checked when its last line is read (a changed file is refused within DIGEST_LINES lines)
    if ((i + 1) % DIGEST_LINES === 0 || i + 1 === scan.n) {
      if (h.digest('hex') !== scan.digests[Math.floor(i / DIGEST_LINES)]) throw changed();
      h = createHash('sha256');
    }
    yield { i: i++, line: row.line, row };
  }
  if (i !== scan.n) throw changed();
}

/** The blocks of lines with both sides, `size` at a time (the last the rest): each block's line numbers and sides. */
export async function* blocksOf(source: CorpusSource, size: number, scan: Scan): AsyncGenerator<{ b: number; lines: number[]; sides: [string, string][] }> {
  let b = 0,
    lines: number[] = [],
    sides: [string, string][] = [];
  for await (const { i, row } of linesOf(source, scan)) {
    if (!hasBothSides(row)) continue;
    lines.push(i);
    sides.push([row.src, row.trg]);
    if (lines.length === size) {
      yield { b: b++, lines, sides };
      lines = [];
      sides = [];
    }
  }
  if (lines.length) yield { b, lines, sides };
}

/** A block's key in --work: the hash of its pairs. */
export function blockHash(sides: [string, string][]): string {
  const h = createHash('sha256');
  for (const [x, y] of sides) h.update(x).update('\t').update(y).update('\n');
  return h.digest('hex');
}
