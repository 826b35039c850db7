// xling search with text: English sentences embedded with the default model and indexed, found by
// their German, French and Spanish translations (--query, --queries FILE.txt), with their sentences
// from the store, as TSV and as JSON lines; the model recorded by index build --model is the one
// that embeds the queries; vector queries get the store's text too; bad input is one clear line.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli, cliInProcess, devColumn, root } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-search-text-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string) => join(dir, f);
const n = 60;
const en = devColumn('en').slice(0, n),
  de = devColumn('de').slice(0, n),
  fr = devColumn('fr').slice(0, n),
  es = devColumn('es').slice(0, n);
const rows = [0, 7, 13, 21, 34, 42, 55];

/** xling in a process of its own (embed, index build: faiss's output capture takes the process's descriptors). */
function okProcess(args: string[]) {
  const r = cli(args, { cwd: dir });
  assert.equal(r.status, 0, `xling ${args.join(' ')}: ${r.stderr}`);
  return r;
}
/** xling search in this process (the model loaded once for all). */
async function ok(args: string[]) {
  const r = await cliInProcess(args, { cwd: dir });
  assert.equal(r.status, 0, `xling ${args.join(' ')}: ${r.stderr}`);
  return r;
}

interface Line {
  query: string | number;
  hits: { id: number; score: number; text?: string }[];
}
const jsonLines = (text: string): Line[] =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

writeFileSync(p('en.txt'), en.join('\n') + '\n');
okProcess(['embed', '--input', 'en.txt', '-o', 'en.npy', '--quiet']);
// the default model, given by a path of its own (recorded with the index)
symlinkSync(join(root, 'models/default'), p('model'));
okProcess(['index', 'build', 'en.npy', '-o', 'en.faiss', '--model', 'model']);

describe('xling search with text queries', () => {
  it('finds the English sentence of German, French and Spanish translations, with its text (TSV)', async () => {
    const queries = rows.flatMap((i) => [de[i]!, fr[i]!, es[i]!]);
    const r = await ok(['search', '--index', 'en.faiss', '--store', 'en.txt', ...queries.flatMap((q) => ['--query', q]), '-k', '3']);
    assert.match(r.stderr, /the index's model: .*model/);
    assert.doesNotMatch(r.stderr, /no --model given/);
    const top = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'))
      .filter((c) => c[1] === '0');
    assert.equal(top.length, queries.length);
    top.forEach(([q, , id, score, text], j) => {
      const want = rows[Math.floor(j / 3)]!;
      assert.equal(Number(q), j);
      assert.equal(Number(id), want, `${queries[j]} → ${text}`);
      assert.equal(text, en[want]!.replace(/\t/g, ' '));
      assert.ok(Number(score) > 0.5, `${queries[j]}: ${score}`);
    });
  });

  it('--queries FILE.txt with -o FILE.jsonl, --json FILE and -o - --json: one JSON object a query, the same hits', async () => {
    writeFileSync(p('q.txt'), rows.map((i) => fr[i]).join('\n') + '\n');
    await ok(['search', '--index', 'en.faiss', '--store', 'en.txt', '--queries', 'q.txt', '-k', '2', '-o', 'hits.jsonl']);
    const file = jsonLines(readFileSync(p('hits.jsonl'), 'utf8'));
    assert.equal(file.length, rows.length);
    file.forEach((l, j) => {
      assert.equal(l.query, fr[rows[j]!]);
      assert.deepEqual(Object.keys(l.hits[0]!), ['id', 'score', 'text']);
      assert.equal(l.hits.length, 2);
      assert.equal(l.hits[0]!.id, rows[j]);
      assert.equal(l.hits[0]!.text, en[rows[j]!]);
      assert.ok(l.hits[0]!.score >= l.hits[1]!.score);
    });
    const out = await ok(['search', '--index', 'en.faiss', '--store', 'en.txt', '--queries', 'q.txt', '-k', '2', '-o', '-', '--json']);
    assert.deepEqual(jsonLines(out.stdout), file, 'standard output holds the JSON lines alone');
    await ok(['search', '--index', 'en.faiss', '--store', 'en.txt', '--queries', 'q.txt', '-k', '2', '--json', 'hits2.jsonl', '-o', 'hits.tsv']);
    assert.deepEqual(jsonLines(readFileSync(p('hits2.jsonl'), 'utf8')), file);
    assert.equal(readFileSync(p('hits.tsv'), 'utf8').trimEnd().split('\n').length, rows.length * 2);
    // exact search against the vectors finds the same
    const exact = await ok(['search', '--base', 'en.npy', '--store', 'en.txt', '--queries', 'q.txt', '-k', '2', '--json']);
    assert.deepEqual(
      jsonLines(exact.stdout).map((l) => l.hits.map((h) => h.id)),
      file.map((l) => l.hits.map((h) => h.id)),
    );
  });

  it("vector queries get the store's sentences too; JSON names them by row", async () => {
    const r = await ok(['search', '--base', 'en.npy', '--queries', 'en.npy', '--store', 'en.txt', '-k', '1', '--json']);
    const lines = jsonLines(r.stdout);
    assert.equal(lines.length, n);
    lines.forEach((l, i) => assert.deepEqual([l.query, l.hits[0]!.id, l.hits[0]!.text], [i, i, en[i]]));
  });

  it("the index's recorded model embeds the queries; without a record, the default model; a missing one is named", async () => {
    // a rebuild without --model drops the record
    okProcess(['index', 'build', 'en.npy', '-o', 'plain.faiss', '--model', 'model']);
    assert.ok(existsSync(p('plain.faiss.json')));
    okProcess(['index', 'build', 'en.npy', '-o', 'plain.faiss']);
    assert.ok(!existsSync(p('plain.faiss.json')));
    const r = okProcess(['search', '--index', 'plain.faiss', '--store', 'en.txt', '--query', de[7]!, '-k', '1']);
    assert.match(r.stderr, /no --model given: using the default model/);
    assert.equal(r.stdout.split('\t')[2], '7');
    // a recorded model that is gone is named; --model gives another
    cpSync(p('en.faiss'), p('gone.faiss'));
    writeFileSync(p('gone.faiss.json'), readFileSync(p('en.faiss.json'), 'utf8').replace(/\/model"/, '/model-gone"'));
    symlinkSync(join(root, 'models/default'), p('model2'));
    const gone = await cliInProcess(['search', '--index', 'gone.faiss', '--query', de[7]!], { cwd: dir });
    assert.equal(gone.status, 1, gone.stderr);
    assert.match(gone.stderr, /its vectors are of the model .*model-gone .*give --model DIR/);
    const given = await ok(['search', '--index', 'gone.faiss', '--query', de[7]!, '--model', 'model2', '-k', '1']);
    assert.equal(given.stdout.split('\t')[2], '7');
  });

  it('bad input: one line naming what is wrong', async () => {
    const bad = async (args: string[], code: number, re: RegExp) => {
      const r = await cliInProcess(['search', ...args], { cwd: dir });
      assert.equal(r.status, code, r.stderr);
      assert.match(r.stderr, re);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    };
    writeFileSync(p('blank.txt'), `${de[0]}\n\n${de[1]}\n`);
    await bad(['--index', 'en.faiss', '--queries', 'blank.txt'], 1, /blank\.txt:2: an empty query/);
    await bad(['--index', 'en.faiss', '--queries', 'en.npy', '--model', 'model'], 2, /--model embeds text queries/);
    await bad(['--index', 'en.faiss'], 2, /give the queries/);
    await bad(['--index', 'en.faiss', '--query', 'x', '--queries', 'q.txt'], 2, /give the queries/);
    writeFileSync(p('short.txt'), en.slice(0, 5).join('\n') + '\n');
    await bad(['--index', 'en.faiss', '--store', 'short.txt', '--query', de[42]!], 1, /short\.txt has 5 lines, but the search found row 42/);
    await bad(['--index', 'en.faiss', '--query', 'x', '-o', 'a.jsonl', '--json', 'b.jsonl'], 2, /the JSON lines twice/);
  });
});
