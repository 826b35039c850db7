// Every xling command against a table of bad inputs: an empty file, invalid UTF-8, vectors of the
// wrong dimension or type, a directory where a file is expected, a missing file, an output that
// is an input, out-of-range numbers. Each must exit 1 (bad input) or 2 (usage error) with a
// message naming the argument or the file, no stack trace, no output and no temporary left
// behind, and no input changed.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { commands } from '../../src/cli/commands.js';
import { indexFactory } from '../../src/index/faiss.js';
import { writeNpy } from '../../src/io/npy.js';
import { kebab, parseArgs, UsageError } from '../../src/util/args.js';
import { describeRule } from '../../src/util/check.js';
import { Rng } from '../../src/util/rng.js';
import { cli, cliInProcess, CliResult, devColumn, root, temporariesIn, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-bad-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const inDir = join(dir, 'in');
mkdirSync(inDir);
const f = (name: string) => join(inDir, name);

// good inputs
tinyDualModel(dir, f('model'));
const d = 32,
  n = 20,
  rng = new Rng(5);
const vec = (rows: number, cols: number) => Float32Array.from({ length: rows * cols }, () => rng.normal());
writeNpy(f('v.npy'), vec(n, d), [n, d]);
writeNpy(f('v2.npy'), vec(n, d), [n, d]);
for (const [name, cols] of [
  ['idx.faiss', d],
  ['idx2.faiss', d],
  ['idx8.faiss', 8],
] as const) {
  const ix = indexFactory(cols, 'Flat');
  ix.add(vec(n, cols));
  ix.write(f(name));
  ix.dispose();
}
const de = devColumn('de').slice(0, n),
  en = devColumn('en').slice(0, n);
writeFileSync(f('s.txt'), de.join('\n') + '\n');
writeFileSync(f('t.txt'), en.join('\n') + '\n');
writeFileSync(f('s.bucc'), de.map((s, i) => `de-${i}\t${s}`).join('\n') + '\n');
writeFileSync(f('t.bucc'), en.map((s, i) => `en-${i}\t${s}`).join('\n') + '\n');
writeFileSync(f('gold'), de.map((_, i) => `de-${i}\ten-${i}`).join('\n') + '\n');
writeFileSync(f('nway.tsv'), 'en\tde\n' + en.map((s, i) => `${s}\t${de[i]}`).join('\n') + '\n');
writeFileSync(f('block1.json'), JSON.stringify({ block: 1 }));
writeFileSync(
  f('cfg.json'),
  JSON.stringify({ model: 'dual', features: { buckets: 1024, dim: 8 }, encoder: { outDim: 8 }, budget: { pairs: 64 }, center: { perLang: 5 } }),
);
writeFileSync(f('docs.tsv'), de.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`).join('\n') + '\n');
writeFileSync(f('docs-en.tsv'), en.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`).join('\n') + '\n');
writeFileSync(f('docs-odd.tsv'), 'games\t1\tPlay a game\n');
writeFileSync(f('docs-par.tsv'), de.map((s, i) => `${i}\t${s}\t${en[i]}`).join('\n') + '\n');
writeFileSync(f('pairs.tsv'), de.map((s, i) => `${s}\t${en[i]}`).join('\n') + '\n');
{
  const r = cli(['import', 'hf', '--from', join(root, 'test/fixtures/hf/distilbert'), '-o', f('hf')]);
  if (r.status !== 0) throw new Error(r.stderr);
}
writeFileSync(f('adapt.json'), JSON.stringify({ budget: { pairs: 64 } }));
writeFileSync(f('adapt-laser.json'), JSON.stringify({ model: 'laser', budget: { pairs: 64 } }));
{
  const r = cli(['classify', 'train', '--model', f('model'), '--data', f('docs-en.tsv'), '-o', f('clf'), '--epochs', '2']);
  if (r.status !== 0) throw new Error(r.stderr);
}
{
  const r = cli(['graph', 'build', '--model', f('model'), '--data', f('nway.tsv'), '--out', f('graph'), '--min-words', '0', '-k', '5', '--quiet']);
  if (r.status !== 0) throw new Error(r.stderr);
}
mkdirSync(f('vecs'));
writeNpy(join(f('vecs'), 'en.npy'), vec(n, d), [n, d]);
writeNpy(join(f('vecs'), 'de.npy'), vec(n, d), [n, d]);
// bad inputs
const empty = f('empty.txt'),
  badUtf8 = f('bad-utf8.txt'),
  aDir = f('a-dir'),
  missing = f('missing.txt');
writeFileSync(empty, '');
writeFileSync(badUtf8, Buffer.concat([Buffer.from('en\tde\n'), Buffer.from([0xc3, 0x28, 0x09, 0x78, 0x0a])]));
mkdirSync(aDir);
writeNpy(f('v8.npy'), vec(n, 8), [n, 8]);
writeNpy(
  f('bits.npy'),
  Uint8Array.from({ length: n * 4 }, (_, i) => (i * 37) & 255),
  [n, 4],
  'uint8',
);
writeNpy(
  f('i32.npy'),
  Int32Array.from({ length: n * d }, (_, i) => i),
  [n, d],
  'int32',
);
mkdirSync(f('vecs-dims'));
writeNpy(join(f('vecs-dims'), 'en.npy'), vec(n, d), [n, d]);
writeNpy(join(f('vecs-dims'), 'de.npy'), vec(n, 8), [n, 8]);

/** Bytes of every input file, to check that no command changed one. */
function snapshot(): Map<string, string> {
  const m = new Map<string, string>();
  for (const rel of readdirSync(inDir, { recursive: true }) as string[]) {
    const p = join(inDir, rel);
    if (statSync(p).isFile()) m.set(rel, readFileSync(p).toString('base64'));
  }
  return m;
}

interface Bad {
  args: string[];
  code: 1 | 2;
  names: string[];
}

/** args with the value after `flag` (or positional number `flag`) replaced, or the pair appended. */
function withValue(args: string[], flag: string | number, value: string, code: 1 | 2): Bad {
  const a = [...args];
  const at = typeof flag === 'number' ? flag : a.indexOf(flag) + 1;
  if (at > 0 || typeof flag === 'number') a[at] = value;
  else a.push(flag, value);
  return { args: a, code, names: [basename(value), ...(typeof flag === 'number' ? [] : [flag])] };
}
/** args with more arguments; the message must name the first (an option). */
const withExtra = (args: string[], extra: string[], code: 1 | 2): Bad => ({
  args: [...args, ...extra],
  code,
  names: [
    extra[0]!,
    ...extra
      .slice(1)
      .filter((x) => x.includes('/'))
      .map((x) => basename(x)),
  ],
});
/** The four bad files for an input: all errors (exit 1) naming the file or the option. */
const badFiles = (args: string[], flag: string | number): Bad[] => [empty, badUtf8, aDir, missing].map((v) => withValue(args, flag, v, 1));
/** The same without the empty file, for inputs where an empty file is good input (embed: a (0, d) array). */
const badNonEmpty = (args: string[], flag: string | number): Bad[] => [badUtf8, aDir, missing].map((v) => withValue(args, flag, v, 1));

// OUT is replaced by each case's own empty output directory (it must stay empty)
const tables: { cmd: string[]; bad: Bad[] }[] = [];
const table = (cmd: string[], good: string[], bad: (good: string[]) => Bad[]) => tables.push({ cmd, bad: bad(good) });

table(['train'], ['--config', f('cfg.json'), '--data', f('nway.tsv'), '--out', 'OUT/m'], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--config', empty, 1),
  withValue(g, '--dev', f('v.npy'), 1),
  withExtra(g, ['--budget-pairs', '0'], 2),
  withValue(g, '--out', f('s.txt'), 1),
  withValue(g, '--out', inDir, 2),
  withExtra(g, ['--mono', `de=${missing}`], 1),
  withExtra(g, ['--mono', 'de'], 2),
  withExtra(g, ['--mono', `d e=${f('s.txt')}`], 1),
]);
table(['train'], ['--init', f('hf'), '--config', f('adapt.json'), '--data', f('nway.tsv'), '--out', 'OUT/m'], (g) => [
  withValue(g, '--init', missing, 1),
  withValue(g, '--init', aDir, 1),
  withValue(g, '--init', f('s.txt'), 1),
  withValue(g, '--init', f('model'), 1),
  withValue(g, '--config', f('cfg.json'), 1),
  withValue(g, '--config', f('adapt-laser.json'), 1),
  ...badFiles(g, '--data'),
]);
table(['classify', 'train'], ['--model', f('model'), '--data', f('docs-en.tsv'), '-o', 'OUT/clf'], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['--epochs', '0'], 2),
  withExtra(g, ['--hidden', '0'], 2),
  withValue(g, '-o', f('s.txt'), 1),
  withValue(g, '-o', f('model'), 2),
  withValue(g, '--data', f('s.txt'), 1),
]);
table(['classify', 'eval'], ['--model', f('model'), '--classifier', f('clf'), '--data', f('docs.tsv'), '--json', 'OUT/r.json'], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--classifier', aDir, 1),
  withValue(g, '--classifier', f('model'), 1),
  withValue(g, '--data', f('docs-odd.tsv'), 1),
  withValue(g, '--json', f('docs.tsv'), 2),
]);
table(['serve'], ['--model', f('model'), '--port', '0'], (g) => [
  withValue(g, '--model', aDir, 1),
  withValue(g, '--model', missing, 1),
  withExtra(g, ['--port', '70000'], 2),
  withExtra(g, ['--index', f('idx8.faiss')], 1),
  withExtra(g, ['--index', empty], 1),
  withExtra(g, ['--store', f('s.txt')], 2),
  withExtra(g, ['--index', f('idx.faiss'), '--store', missing], 1),
  withExtra(g, ['--max-client-batch-size', '0'], 2),
  withExtra(g, ['--graph', aDir], 1),
  withExtra(g, ['--graph', f('s.txt')], 1),
]);
table(['graph', 'build'], ['--model', f('model'), '--data', f('nway.tsv'), '--out', 'OUT/g', '--min-words', '0'], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['-k', '0'], 2),
  withExtra(g, ['--shard', '2/2'], 2),
  withExtra(g, ['--recall-target', '1.5'], 2),
  withValue(g, '--out', f('s.txt'), 1),
  withExtra(g, ['--step', 'bogus'], 2),
]);
table(['graph', 'merge'], ['--graph', f('graph')], (g) => [withValue(g, '--graph', aDir, 1), withValue(g, '--graph', missing, 1)]);
table(['graph', 'stats'], ['--graph', f('graph'), '--json', 'OUT/s.json', '--svg', 'OUT/h.svg'], (g) => [
  withValue(g, '--graph', aDir, 1),
  withValue(g, '--graph', missing, 1),
  withExtra(g, ['--sample', '0'], 2),
  withValue(g, '--svg', `${f('s.txt')}/h.svg`, 2),
  withExtra(g, ['--json', '-', '--svg', '-'], 2),
]);
table(['graph', 'neighbours'], ['--graph', f('graph'), '#3'], (g) => [
  withValue(g, '--graph', aDir, 1),
  withValue(g, '--graph', missing, 1),
  withValue(g, 2, '#4000', 2),
  withExtra(g, ['-k', '0'], 2),
  withExtra(g, ['--model', missing], 1),
]);
table(['graph', 'path'], ['--graph', f('graph'), '#3', '#7'], (g) => [
  withValue(g, '--graph', aDir, 1),
  withValue(g, '--graph', missing, 1),
  withValue(g, 3, '#4000', 2),
  withExtra(g, ['--model', aDir], 1),
]);
table(['analyze', 'vocab'], ['--model', f('model'), '--data', f('nway.tsv'), '--min-sentences', '5', '--json', 'OUT/v.json'], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['--sample', '0'], 2),
  withExtra(g, ['--alpha', '0'], 2),
  withValue(g, '--json', f('nway.tsv'), 2),
  withValue(g, '--data', `${f('nway.tsv')}:en`, 1),
]);
table(['embed'], ['--model', f('model'), '--input', f('s.txt'), '-o', 'OUT/v.npy'], (g) => [
  ...badNonEmpty(g, '--input'),
  withValue(g, '--model', aDir, 1),
  withValue(g, '--model', f('s.txt'), 1),
  withExtra(g, ['--chunk', '0'], 2),
  withValue(g, '-o', f('s.txt'), 2),
  withValue(g, '-o', aDir, 2),
  withValue(g, '-o', `${f('s.txt')}/sub/v.npy`, 2),
  { ...withValue(g, '-o', '-', 2), args: [...withValue(g, '-o', '-', 2).args, '--raw-f32'] },
]);
table(['distill'], ['--teacher', f('model'), '--student-config', f('cfg.json'), '--data', f('s.txt'), '-o', 'OUT/s'], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--teacher', aDir, 1),
  withValue(g, '--teacher', missing, 1),
  withValue(g, '--student-config', empty, 1),
  withExtra(g, ['--budget-pairs', '0'], 2),
  withValue(g, '-o', f('t.txt'), 1),
  withValue(g, '-o', f('model'), 2),
  withValue(g, '--data', `d e=${f('s.txt')}`, 2),
  withExtra(g, ['--parallel', f('nway.tsv'), '--pivot', 'xx'], 1),
]);
table(['export'], ['--model', f('model'), '-o', 'OUT/enc'], (g) => [
  withValue(g, '--model', aDir, 1),
  withValue(g, '--model', missing, 1),
  withValue(g, '-o', f('s.txt'), 1),
  withValue(g, '-o', f('model'), 2),
]);
table(['eval', 'xsim'], ['--model', f('model'), '--data', f('nway.tsv'), '--min-rows', '5', '--json', 'OUT/x.json'], (g) => [
  ...badFiles(g, '--data'),
  withExtra(g, ['--min-rows', '0'], 2),
  withValue(g, '--json', f('nway.tsv'), 2),
  { args: ['--vectors', f('vecs-dims'), '--data', f('nway.tsv'), '--min-rows', '5', '--json', 'OUT/x.json'], code: 1, names: ['de.npy'] },
  { args: ['--vectors', f('s.txt'), '--data', f('nway.tsv'), '--min-rows', '5', '--json', 'OUT/x.json'], code: 1, names: ['--vectors'] },
]);
table(
  ['eval', 'bucc'],
  [
    '--src',
    f('s.bucc'),
    '--trg',
    f('t.bucc'),
    '--gold',
    f('gold'),
    '--src-vectors',
    f('v.npy'),
    '--trg-vectors',
    f('v2.npy'),
    '--json',
    'OUT/b.json',
    '--svg',
    'OUT/b.svg',
  ],
  (g) => [
    ...badFiles(g, '--gold'),
    withValue(g, '--src', badUtf8, 1),
    withValue(g, '--trg-vectors', f('v8.npy'), 1),
    withValue(g, '--src-vectors', f('i32.npy'), 1),
    withExtra(g, ['-k', '0'], 2),
    withExtra(g, ['--threshold-from', badUtf8], 1),
    withValue(g, '--json', f('gold'), 2),
  ],
);
table(['train-lid'], ['--model', f('model'), '--data', f('nway.tsv')], (g) => [
  ...badFiles(g, '--data'),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['--max-lines', '5'], 2),
  withExtra(g, ['--top-k', '1'], 2),
]);
const laserFx = (name: string) => join(root, 'test', 'fixtures', 'laser', name);
table(['import', 'laser'], ['--checkpoint', laserFx('tiny.pt'), '--spm', laserFx('spm-unigram.model'), '-o', 'OUT/m'], (g) => [
  ...badFiles(g, '--checkpoint'),
  withValue(g, '--spm', empty, 1),
  withValue(g, '--spm', missing, 1),
  withValue(g, '--spm', laserFx('tiny.cvocab'), 1),
  withValue(g, '--checkpoint', laserFx('evil.pt'), 1),
  withExtra(g, ['--vocab', missing], 1),
  withExtra(g, ['--max-len', '1'], 2),
]);
table(['import', 'hf'], ['--from', join(root, 'test', 'fixtures', 'hf', 'bert'), '-o', 'OUT/m'], (g) => [
  withValue(g, '--from', aDir, 1),
  withValue(g, '--from', missing, 1),
  withValue(g, '--from', f('s.txt'), 1),
  withExtra(g, ['--max-length', '1'], 2),
]);
table(['scorer', 'train'], ['--model', f('model'), '--parallel', f('nway.tsv'), '--rows', '20', '-o', 'OUT/scorer'], (g) => [
  ...badFiles(g, '--parallel'),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['--bucc', inDir], 2),
  withExtra(g, ['--rows', '5'], 2),
  withExtra(g, ['--pairs', 'de'], 2),
  withExtra(g, ['--pairs', 'xx-en'], 1),
]);
table(['scorer', 'score'], ['--input', f('pairs.tsv'), '--model', f('model'), '-o', 'OUT/s.tsv'], (g) => [
  ...badFiles(g, '--input'),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['--src', f('s.txt')], 2),
  withExtra(g, ['--config', f('block1.json')], 1),
  withExtra(g, ['--label-col', '1'], 2),
  withExtra(g, ['--label-col', '3'], 1),
  withExtra(g, ['--scorer', aDir], 1),
  withValue(g, '-o', f('pairs.tsv'), 2),
]);
table(['eval', 'retrieval'], ['--src-vectors', f('v.npy'), '--trg-vectors', f('v2.npy'), '--json', 'OUT/r.json'], (g) => [
  ...badFiles(g, '--src-vectors'),
  withValue(g, '--trg-vectors', f('v8.npy'), 1),
  withExtra(g, ['--src-ids', badUtf8], 1),
  withExtra(g, ['--index', f('idx8.faiss')], 1),
  withExtra(g, ['--nprobe', '0'], 2),
  withValue(g, '--json', f('v2.npy'), 2),
]);
table(['eval', 'retrieval'], ['--docs', f('docs-par.tsv'), '--model', f('model'), '--json', 'OUT/r.json'], (g) => [
  ...badFiles(g, '--docs'),
  withValue(g, '--docs', f('s.txt'), 1),
  withValue(g, '--model', aDir, 1),
  withExtra(g, ['--nprobe', '4'], 2),
  withValue(g, '--model', missing, 1),
  withValue(g, '--json', f('docs-par.tsv'), 2),
]);
table(
  ['probe', 'code-switch'],
  ['--model', f('model'), '--data', f('nway.tsv'), '--sentences', '5', '--switch-langs', '1', '--rates', '0.2', '--json', 'OUT/cs.json'],
  (g) => [
    ...badFiles(g, '--data'),
    withValue(g, '--model', aDir, 1),
    withExtra(g, ['--rates', '0.1,2'], 2),
    withExtra(g, ['--switch-langs', '0'], 2),
    withExtra(g, ['--langs', 'zz'], 2),
    withExtra(g, ['--align-data', missing], 1),
    withValue(g, '--json', aDir, 2),
  ],
);
// the queue commands: everything is checked before Redis is contacted (port 1: nothing listens)
const noRedis = 'redis://127.0.0.1:1';
table(
  ['cluster', 'embed'],
  ['--model', f('model'), '--input', f('s.txt'), '-o', 'OUT/v.npy', '--redis', noRedis, '--shards', '2', '--work', 'OUT/work'],
  (g) => [
    ...badNonEmpty(g, '--input'),
    withValue(g, '--input', '-', 2),
    withValue(g, '--redis', 'http://queue', 1),
    withValue(g, '--shards', '0', 2),
    withValue(g, '--work', f('s.txt'), 2),
    withValue(g, '-o', f('s.txt'), 2),
    withValue(g, '--model', missing, 1),
  ],
);
// the sentence files' contents are read by the flow's store job, which fails the flow naming them (test/cluster/cluster.test.ts)
table(
  ['cluster', 'graph'],
  ['--model', f('model'), '--data', f('nway.tsv'), '--out', 'OUT/g', '--redis', noRedis, '--shards', '2', '--work', 'OUT/work'],
  (g) => [
    withValue(g, '--data', aDir, 1),
    withValue(g, '--data', missing, 1),
    withValue(g, '--redis', 'http://queue', 1),
    withValue(g, '--shards', '0', 2),
    withValue(g, '--work', f('s.txt'), 2),
    withValue(g, '--out', f('s.txt'), 2),
    withValue(g, '--model', missing, 1),
    withExtra(g, ['-k', '0'], 2),
    withValue(g, '--redis', noRedis, 1),
  ],
);
table(['cluster', 'index'], [f('v.npy'), '-o', 'OUT/x.faiss', '--redis', noRedis, '--shards', '2', '--work', 'OUT/work'], (g) => [
  ...badFiles(g, 0),
  withValue(g, 0, f('i32.npy'), 1),
  withExtra(g, ['--factory', 'Bogus99'], 1),
  withExtra(g, ['--factory', 'HNSW8'], 2),
  withValue(g, '--shards', '0', 2),
  withValue(g, '-o', f('v.npy'), 2),
  withValue(g, '--work', f('s.txt'), 2),
  withValue(g, '--redis', 'http://queue', 1),
  withValue(g, '--redis', noRedis, 1),
]);
table(
  ['cluster', 'mine'],
  [
    '--src',
    f('s.txt'),
    '--trg',
    f('t.txt'),
    '--src-vectors',
    f('v.npy'),
    '--trg-vectors',
    f('v2.npy'),
    '-o',
    'OUT/m.tsv',
    '--redis',
    noRedis,
    '--shards',
    '2',
    '--work',
    'OUT/work',
  ],
  (g) => [
    ...badFiles(g, '--src'),
    withValue(g, '--trg-vectors', f('v8.npy'), 1),
    withValue(g, '--src-vectors', f('i32.npy'), 1),
    withExtra(g, ['-k', '-1'], 2),
    withValue(g, '-o', f('t.txt'), 2),
    withValue(g, '--shards', '0', 2),
    withValue(g, '--redis', 'http://queue', 1),
    withValue(g, '--redis', noRedis, 1),
  ],
);
table(['cluster', 'status'], ['--redis', noRedis, '--json', 'OUT/s.json'], (g) => [
  withValue(g, '--redis', 'not a url', 1),
  withValue(g, '--json', aDir, 2),
  withValue(g, '--redis', noRedis, 1),
]);
table(['cluster', 'cancel'], ['--redis', noRedis, '--flow', 'embed-0'], (g) => [
  withValue(g, '--redis', 'http://queue', 1),
  withValue(g, '--redis', noRedis, 1),
]);
table(['worker'], ['--redis', noRedis], (g) => [
  withValue(g, '--redis', 'ftp://queue', 1),
  withExtra(g, ['--concurrency', '0'], 2),
  withValue(g, '--redis', noRedis, 1),
]);
table(['mine'], ['--src', f('s.txt'), '--trg', f('t.txt'), '--src-vectors', f('v.npy'), '--trg-vectors', f('v2.npy'), '-o', 'OUT/m.tsv'], (g) => [
  ...badFiles(g, '--src'),
  withValue(g, '--trg-vectors', f('v8.npy'), 1),
  withValue(g, '--src-vectors', f('i32.npy'), 1),
  withExtra(g, ['--index', empty], 1),
  withExtra(g, ['-k', '-1'], 2),
  withValue(g, '-o', f('t.txt'), 2),
]);
table(['align'], ['--src', f('s.txt'), '--trg', f('t.txt'), '--model', f('model'), '-o', 'OUT/a.tsv'], (g) => [
  ...badFiles(g, '--src'),
  ...badFiles(g, '--trg'),
  withExtra(g, ['--src-lang', 'xx'], 1),
  withExtra(g, ['--max-group', '1'], 2),
  withValue(g, '-o', f('s.txt'), 2),
  withValue(g, '--model', aDir, 1),
  { args: ['--pairs', f('pairs.tsv'), '--model', f('model'), '-o', 'OUT/p'], code: 1, names: ['pairs.tsv:1'] },
]);
table(['corpus'], [f('nway.tsv'), '-o', 'OUT/c.tsv', '--no-align', '--quiet'], (g) => [
  withValue(g, 0, missing, 1),
  withValue(g, 0, empty, 1),
  withValue(g, 0, badUtf8, 1),
  withValue(g, '-o', f('nway.tsv'), 2),
  withExtra(g, ['--dev-fraction', '0.9', '--dev-out', 'OUT/d.tsv'], 2),
  withExtra(g, ['--min-words', '0'], 2),
  withExtra(g, ['--debian', 'Bad_Name'], 1),
]);
table(['index', 'build'], [f('v.npy'), '-o', 'OUT/x.faiss'], (g) => [
  ...badFiles(g, 0),
  withValue(g, 0, f('i32.npy'), 1),
  { args: [f('v8.npy'), '--trained', f('idx.faiss'), '-o', 'OUT/x.faiss'], code: 1, names: ['v8.npy', '--trained'] },
  withExtra(g, ['--chunk', '0'], 2),
  withExtra(g, ['--factory', 'Bogus99'], 1),
  withValue(g, '-o', f('v.npy'), 2),
  withValue(g, '-o', '-', 2),
  withExtra(g, ['--vectors', f('v.npy')], 2),
  { args: ['--vectors', missing, '-o', 'OUT/x.faiss'], code: 1, names: [basename(missing), '<vectors>'] },
  { args: [f('bits.npy'), '--factory', 'IVF4,Flat', '-o', 'OUT/x.faiss'], code: 2, names: ['--factory'] },
]);
table(['index', 'merge'], [f('idx.faiss'), f('idx2.faiss'), '-o', 'OUT/m.faiss'], (g) => [
  ...badFiles(g, 1),
  withValue(g, 1, f('idx8.faiss'), 1),
  withValue(g, 1, f('idx.faiss'), 2),
  withValue(g, '-o', f('idx2.faiss'), 2),
]);
table(['search'], ['--index', f('idx.faiss'), '--queries', f('v.npy'), '-o', 'OUT/s.tsv'], (g) => [
  ...badFiles(g, '--queries'),
  withValue(g, '--index', empty, 1),
  withValue(g, '--queries', f('v8.npy'), 1),
  withExtra(g, ['-k', '0'], 2),
  withValue(g, '-o', f('v.npy'), 2),
  { args: ['--base', f('v8.npy'), '--queries', f('v.npy'), '-o', 'OUT/s.tsv'], code: 1, names: ['v8.npy', '--base'] },
  withExtra(g, ['--rescore', '2'], 2),
  { args: ['--base', f('bits.npy'), '--queries', f('v8.npy'), '-o', 'OUT/s.tsv'], code: 1, names: ['--queries', 'v8.npy'] },
]);

/** Runs one bad case (its own empty output directory as OUT/ and as the working directory) and checks the refusal. */
async function refuses(
  cmd: string[],
  b: Bad,
  run: (args: string[], o: { cwd: string }) => CliResult | Promise<CliResult>,
  k: string,
): Promise<CliResult & { out: string }> {
  const out = join(dir, `out-${k}`);
  mkdirSync(out);
  const args = b.args.map((a) => a.replace(/^OUT\//, `${out}/`));
  const r = await run([...cmd, ...args], { cwd: out });
  const what = `xling ${cmd.join(' ')} ${args.join(' ')}`;
  assert.equal(r.status, b.code, `${what}: exit ${r.status}\n${r.stderr}`);
  assert.ok(
    b.names.some((nm) => r.stderr.includes(nm)),
    `${what}: the message names none of ${b.names}:\n${r.stderr}`,
  );
  assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+\)?\n/, `${what}: a stack trace`);
  assert.deepEqual(readdirSync(out), [], `${what}: left ${readdirSync(out)}`);
  return { ...r, out };
}

/**
 * The cases that also run as real processes (`node dist/src/cli/main.js`): the exit code, the
 * message and no partial output hold end to end, not only through runCli. [command, case index]
 * (negative: from the end): bad data found while reading it (train: invalid UTF-8), a usage
 * error (embed -o -), a faiss error (index build --factory Bogus99), a server refused before it
 * listens (serve --index of another dimension), a Redis that cannot be reached (the process exits).
 */
const endToEnd: [string, number][] = [
  ['train', 1],
  ['embed', -1],
  ['index build', 7],
  ['serve', 3],
  ['cluster status', -1],
];

describe('CLI: every command refuses bad input cleanly', () => {
  it('the table covers every command', () => {
    assert.deepEqual([...new Set(tables.map((t) => t.cmd.join(' ')))].sort(), commands.map((c) => c.path.join(' ')).sort());
  });

  const inputs = snapshot();
  let k = 0;
  // in this process (runCli, as main.js runs it): starting a process (and libtorch) per case took minutes
  for (const t of tables) {
    it(`xling ${t.cmd.join(' ')}: ${t.bad.length} bad inputs`, async () => {
      for (const b of t.bad) await refuses(t.cmd, b, cliInProcess, String(k++));
    });
  }

  it(`as processes: ${endToEnd.length} of the cases above refuse alike (exit code, message), with no output`, async () => {
    for (const [cmd, i] of endToEnd) {
      const t = tables.find((x) => x.cmd.join(' ') === cmd);
      assert.ok(t, `no table for xling ${cmd}`);
      const b = t.bad.at(i);
      assert.ok(b, `xling ${cmd} has no case ${i}`);
      const p = await refuses(t.cmd, b, cli, `p${k++}`);
      assert.equal(p.stdout, '', `xling ${cmd} (case ${i}): standard output ${p.stdout}`);
      const q = await refuses(t.cmd, b, cliInProcess, `q${k++}`);
      assert.equal(p.stderr.replaceAll(p.out, 'OUT'), q.stderr.replaceAll(q.out, 'OUT'), `xling ${cmd} (case ${i}): the process and runCli say the same`);
    }
  });

  it('left no temporaries and changed no input', () => {
    assert.deepEqual(temporariesIn(dir), []);
    assert.deepEqual(snapshot(), inputs);
  });

  it('every number option of every command has a range, and a value outside it is a usage error naming the option', () => {
    for (const c of commands) {
      for (const [key, o] of Object.entries(c.spec.options)) {
        if (o.type !== 'number') continue;
        assert.ok(o.range, `xling ${c.path.join(' ')} --${kebab(key)} has no range`);
        const r = o.range!;
        const outside = r.min !== undefined ? r.min - 1 : r.above !== undefined ? r.above : r.max !== undefined ? r.max + 1 : r.below;
        for (const v of [...(outside !== undefined ? [String(outside)] : []), 'abc', 'Infinity']) {
          assert.throws(
            () => parseArgs(c.spec, [`--${kebab(key)}`, v]),
            (e: unknown) => e instanceof UsageError && e.message.includes(`--${kebab(key)}`) && (v !== String(outside) || e.message.includes(describeRule(r))),
            `xling ${c.path.join(' ')} --${kebab(key)} ${v}`,
          );
        }
      }
    }
  });
});
