// The work directory of a corpus scored block by block (xling scorer score): each block's scores
// are kept there as it finishes, under the key of the scoring they were made with, so that a
// killed run loses one block at most and the same command with --resume goes on from there. A
// block is reused only for the same scoring and the same pairs (each block's lines are hashed).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { removeStaleTemporaries, writeFileAtomicSync } from '../../util/atomic.js';
import { fileStamps } from '../../util/stamps.js';
import { MineSettings } from '../settings.js';

/** The files of a work directory: the key of its scoring, the scored blocks, and their temporaries. */
const WORK_FILE = /^(key\.json|block-\d+\.json)(\.tmp-\d+-[0-9a-f]{8})?$/;

/** The files of an existing directory that a block store does not make (a directory holding any is never removed or reused). */
export function foreignFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => !WORK_FILE.test(f)) : [];
}

/** A block's scores as kept in the work directory: its lines' scores, its distinct sentences a side, its k (and in the file, the hash of its pairs). */
export interface StoredBlock {
  scores: Float64Array;
  distinct: [number, number];
  k: number;
}

/** The scored blocks of a run: whether any were kept (with resume), a kept block (null: score it), a block to keep. */
export interface BlockStore {
  any(): boolean;
  get(b: number, hash: string): StoredBlock | null;
  put(b: number, scores: Float64Array, distinct: [number, number], k: number, hash: string): void;
}

/**
 * What a run's blocks are scored with: the model and scorer (their files' sizes and times), and
 * every option of the command line (`options`, by name) but those applied after scoring (filters,
 * threshold, outputs) and the input's names (each block's own lines are checked: openBlockStore),
 * with the settings' scoring — a block scored with any other is scored again.
 */
export function scoringKey(options: Record<string, unknown>, s: MineSettings): string {
  const after = new Set(['input', 'src', 'trg', 'output', 'threshold', 'thresholdFrom', 'labelCol', 'json', 'svg', 'keepAll', 'stats', 'resume', 'config']);
  const files = (['model', 'scorer'] as const).flatMap((o) => (typeof options[o] === 'string' ? fileStamps(options[o] as string) : []));
  const { threads: _threads, ...embed } = s.embed;
  const scoring = { k: s.k, margin: s.margin, block: s.block, selfTables: s.selfTables, embed };
  const opts = [
    ...Object.keys(options)
      .filter((o) => !after.has(o) && o !== '_')
      .map((o) => [o, options[o]]),
    ...Object.entries(scoring),
  ].sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  return createHash('sha256').update(JSON.stringify({ files, opts })).digest('hex');
}

/**
 * The scored blocks of a run in DIR (key.json: the scoring they were made with; block-<b>.json each):
 * without `resume`, or when the key differs, what is there is removed first (said).
 */
export function openBlockStore(dir: string, key: string, resume: boolean, say: (line: string) => void): BlockStore {
  const keyFile = join(dir, 'key.json');
  if (existsSync(dir) && readdirSync(dir).length) {
    let same = false;
    try {
      same = (JSON.parse(readFileSync(keyFile, 'utf8')) as { key?: string }).key === key;
    } catch {
      /* not ours, or unreadable: started again */
    }
    if (!resume || !same) {
      rmSync(dir, { recursive: true, force: true });
      say(`removed ${dir} of an earlier run${resume ? ' (made with another model, scorer or scoring options)' : ' (--resume reuses it)'}`);
    }
  }
  mkdirSync(dir, { recursive: true });
  removeStaleTemporaries(dir);
  if (!existsSync(keyFile)) writeFileAtomicSync(keyFile, JSON.stringify({ key }) + '\n');
  const file = (b: number) => join(dir, `block-${b}.json`);
  // (with resume and blocks kept: each block's lines are read and hashed before scoring, to say what is reused)
  const any = resume && readdirSync(dir).some((f) => /^block-\d+\.json$/.test(f));
  return {
    any: () => any,
    get(b, hash) {
      if (!resume || !existsSync(file(b))) return null;
      try {
        const r = JSON.parse(readFileSync(file(b), 'utf8')) as { scores: number[]; distinct: [number, number]; k: number; hash: string };
        if (r.hash !== hash) {
          say(`block ${b + 1} has other lines than when it was kept: scored again`);
          return null;
        }
        if (Array.isArray(r.scores) && r.scores.every((x) => typeof x === 'number'))
          return { scores: Float64Array.from(r.scores), distinct: r.distinct, k: r.k };
      } catch {
        /* scored again */
      }
      say(`${file(b)} unreadable: block ${b + 1} scored again`);
      return null;
    },
    put(b, scores, distinct, k, hash) {
      writeFileAtomicSync(file(b), JSON.stringify({ hash, scores: Array.from(scores), distinct, k }));
    },
  };
}
