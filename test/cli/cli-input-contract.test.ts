// One input contract for every command that reads text, with the default model (no --model): a
// table of commands × inputs (a 1 MB line among normal lines, Latin-1 bytes in a UTF-8 file, an
// empty file, a binary file, an unknown language code, too few rows, a mistyped option). Each
// outcome is one of two classes, the same across commands: done with a warning naming the file (or
// what was skipped), or exit 1 (2 for usage) with one line naming the file or the option — never a
// stack trace, never a partial output. Then the commands that fall back to the default model,
// and xling corpus on catalogs that do not decode.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { commands } from '../../src/cli/commands.js';
import { cliInProcess, CliResult, devColumn } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-input-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const f = (name: string) => join(dir, name);

const n = 12;
const de = devColumn('de').slice(0, n),
  en = devColumn('en').slice(0, n);
const lines = (xs: string[]) => xs.join('\n') + '\n';
writeFileSync(f('en.txt'), lines(en));
writeFileSync(f('en-few.txt'), lines(en.slice(0, 2)));
// a 1 MB line among normal ones
writeFileSync(f('long.txt'), lines([...de.slice(0, 6), 'Wort '.repeat(200_000).trim(), ...de.slice(7)]));
// Latin-1 bytes (ä, ö, ü, ß as single bytes) in a file that should be UTF-8
writeFileSync(f('latin1.txt'), Buffer.from(lines(['Größe und Öl', ...de.slice(1)]), 'latin1'));
writeFileSync(f('empty.txt'), '');
// random bytes (seeded): not text
let seed = 7;
writeFileSync(f('binary.bin'), Buffer.from(Array.from({ length: 4096 }, () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16) as number[]));
writeFileSync(f('few.txt'), lines(de.slice(0, 2)));

type Input = 'long' | 'latin1' | 'empty' | 'binary' | 'lang' | 'few' | 'typo';
/** done: exit 0, an output written, a warning matching `says`; fail: exit 1 (usage: 2), the one error line matching `says`. */
type Outcome = { done: RegExp } | { fail: RegExp; code?: 2 };

interface Row {
  cmd: string;
  /** The arguments reading `file` (paired with `other`, a good file of as many lines where the command takes two). */
  args: (file: string, other: string) => string[];
  /** The arguments with an unknown language code. */
  lang: string[];
  expect: Record<Input, Outcome>;
}

const utf8 = (file: string): Outcome => ({ fail: new RegExp(`${file}:\\d+: invalid UTF-8`) });
const cut = (what: string): Outcome => ({ done: new RegExp(`warning: .*${what}.*: 1 of \\d+ lines were longer than the model reads and were cut`) });
const typo: Outcome = { fail: /unknown option '--modle' \(did you mean --model\?\)/, code: 2 };
const common = { latin1: utf8('latin1.txt'), binary: utf8('binary.bin'), typo };

const rows: Row[] = [
  {
    cmd: 'embed',
    args: (file) => ['--input', file, '-o', 'OUT/v.npy'],
    lang: ['--input', f('en.txt'), '--lang', 'xx', '-o', 'OUT/v.npy'],
    expect: {
      ...common,
      long: cut('long.txt'),
      empty: { done: /warning: .*empty.txt is empty: writing a \(0, \d+\) array/ },
      lang: { fail: /--lang 'xx': the model has no language of that code \(it knows .*en/ },
      few: { done: /^/ },
    },
  },
  {
    cmd: 'mine',
    args: (file, other) => ['--src', file, '--trg', other, '-o', 'OUT/m.tsv'],
    lang: ['--src', f('few.txt'), '--trg', f('en-few.txt'), '--src-lang', 'xx', '-o', 'OUT/m.tsv'],
    expect: {
      ...common,
      long: cut('long.txt'),
      empty: { fail: /empty.txt: empty file/ },
      lang: { fail: /--src-lang 'xx'/ },
      few: { done: /warning: -k 4 is more than the 2 source sentences; using k=2/ },
    },
  },
  {
    cmd: 'align',
    args: (file, other) => ['--src', file, '--trg', other, '-o', 'OUT/a.tsv'],
    lang: ['--src', f('few.txt'), '--trg', f('en-few.txt'), '--src-lang', 'xx', '-o', 'OUT/a.tsv'],
    expect: {
      ...common,
      long: cut('long.txt'),
      empty: { fail: /--src .*empty.txt: empty document/ },
      lang: { fail: /--src-lang 'xx'/ },
      few: { done: /2 × 2 sentences/ },
    },
  },
  {
    cmd: 'eval xsim',
    args: (file, other) => ['--data', `de=${file}`, '--data', `en=${other}`, '--min-rows', '5', '--json', 'OUT/x.json'],
    lang: ['--data', `xx=${f('few.txt')}`, '--data', `en=${f('en-few.txt')}`, '--json', 'OUT/x.json'],
    expect: {
      ...common,
      long: cut('long.txt'),
      empty: { fail: /--data: .* the files must be line-aligned/ },
      lang: { fail: /--data xx=.*: 'xx' is not an ISO 639 language code/ },
      few: { fail: /no pair of languages has --min-rows 5 rows in common \(the most is 2\): give a lower --min-rows/ },
    },
  },
  {
    cmd: 'graph build',
    // --max-words 0: the 1 MB line is not left out by the graph's length bounds but embedded (and cut)
    args: (file, other) => ['--data', `de=${file}`, '--data', `en=${other}`, '--out', 'OUT/g', '--min-words', '0', '--max-words', '0', '--quiet'],
    lang: ['--data', `xx=${f('few.txt')}`, '--data', `en=${f('en-few.txt')}`, '--out', 'OUT/g'],
    expect: {
      ...common,
      long: cut("the store's rows"),
      empty: { fail: /empty.txt: no sentences/ },
      lang: { fail: /--data xx=.*: 'xx' is not an ISO 639 language code/ },
      few: { done: /^/ },
    },
  },
  {
    cmd: 'analyze vocab',
    args: (file, other) => ['--data', `de=${file}`, '--data', `en=${other}`, '--min-sentences', '5', '--json', 'OUT/v.json'],
    lang: ['--data', `xx=${f('few.txt')}`, '--data', `en=${f('en-few.txt')}`, '--json', 'OUT/v.json'],
    expect: {
      ...common,
      long: cut('--data'),
      empty: { fail: /empty.txt: no sentences/ },
      lang: { fail: /--data xx=.*: 'xx' is not an ISO 639 language code/ },
      few: { fail: /--data: 0 language\(s\) with at least --min-sentences 5 sentences.*give a lower --min-sentences/ },
    },
  },
  {
    cmd: 'scorer score',
    args: (file, other) => ['--src', file, '--trg', other, '-o', 'OUT/s.tsv'],
    lang: ['--src', f('few.txt'), '--trg', f('en-few.txt'), '--src-lang', 'xx', '-o', 'OUT/s.tsv'],
    expect: {
      ...common,
      long: cut('long.txt'),
      empty: { fail: /--src .*empty.txt has 0 lines but --trg .* has 12/ },
      lang: { fail: /--src-lang 'xx'/ },
      few: { done: /2 lines scored/ },
    },
  },
];

const inputs: Record<Exclude<Input, 'lang' | 'typo'>, [string, string]> = {
  long: [f('long.txt'), f('en.txt')],
  latin1: [f('latin1.txt'), f('en.txt')],
  empty: [f('empty.txt'), f('en.txt')],
  binary: [f('binary.bin'), f('en.txt')],
  few: [f('few.txt'), f('en-few.txt')],
};

/** Runs a command with OUT/ as its own empty folder; the result and what OUT holds after. */
async function run(cmd: string, args: string[], k: string): Promise<CliResult & { out: string[] }> {
  const out = f(`out-${k}`);
  mkdirSync(out);
  const r = await cliInProcess([...cmd.split(' '), ...args.map((a) => a.replace(/^OUT\//, `${out}/`))]);
  return { ...r, out: readdirSync(out) };
}

describe('CLI: one input contract across commands (default model)', () => {
  let k = 0;
  for (const row of rows) {
    it(`xling ${row.cmd}: ${Object.keys(row.expect).join(', ')}`, async () => {
      for (const input of Object.keys(row.expect) as Input[]) {
        const args = input === 'lang' ? row.lang : input === 'typo' ? [...row.args(f('en.txt'), f('en.txt')), '--modle', 'x'] : row.args(...inputs[input]);
        const r = await run(row.cmd, args, String(k++));
        const what = `xling ${row.cmd} (${input})`;
        const e = row.expect[input];
        assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+\)?\n/, `${what}: a stack trace:\n${r.stderr}`);
        assert.doesNotMatch(r.stderr, /TypeError|ReferenceError|Cannot read properties/, `${what}: a JavaScript error:\n${r.stderr}`);
        if ('done' in e) {
          assert.equal(r.status, 0, `${what}: exit ${r.status}\n${r.stderr}`);
          assert.ok(r.out.length > 0, `${what}: no output`);
          assert.match(r.stderr, e.done, `${what}:\n${r.stderr}`);
        } else {
          assert.equal(r.status, e.code ?? 1, `${what}: exit ${r.status}\n${r.stderr}`);
          assert.deepEqual(r.out, [], `${what}: left ${r.out}`);
          const errors = r.stderr.split('\n').filter((l) => l.startsWith('xling '));
          assert.equal(errors.length, 1, `${what}: one error line:\n${r.stderr}`);
          assert.match(errors[0]!, e.fail, `${what}:\n${r.stderr}`);
        }
      }
    });
  }

  it('a language name or a close miss in LANG=FILE gets a suggestion; --inptu is one swap from --input', async () => {
    for (const [cmd, args] of [
      ['eval xsim', ['--data', `english=${f('en.txt')}`, '--data', `de=${f('long.txt')}`]],
      ['graph build', ['--data', `German=${f('few.txt')}`, '--out', 'OUT/g']],
    ] as const) {
      const r = await run(cmd, [...args], String(k++));
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /'(english|German)' is not a language code \(did you mean (en|de)\?\)/);
    }
    const r = await run('embed', ['--inptu', f('en.txt'), '-o', 'OUT/v.npy'], String(k++));
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown option '--inptu' \(did you mean --input\?\)/);
  });

  it('graph build given a text file without LANG= says how to give it', async () => {
    const r = await run('graph build', ['--data', f('en.txt'), '--out', 'OUT/g'], String(k++));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /en.txt:1: not an N-way TSV .* give LANG=FILE, e\.g\. en=.*en.txt/);
  });
});

describe('CLI: help', () => {
  it('every option and argument of every command has a help line; examples use files the user has or placeholders', () => {
    for (const c of commands) {
      const name = `xling ${c.path.join(' ')}`;
      for (const [key, o] of Object.entries(c.spec.options)) if (!o.hidden) assert.ok(o.help?.trim(), `${name} --${key} has no help line`);
      for (const p of c.spec.positionals ?? []) assert.ok(p.help?.trim(), `${name} <${p.name}> has no help line`);
      for (const e of c.spec.examples ?? []) assert.doesNotMatch(e, /\.\.\//, `${name}: an example outside the user's files: ${e}`);
    }
  });

  it('every command that takes --model defaults it, or its help says why it cannot', () => {
    for (const c of commands) {
      const m = c.spec.options.model;
      if (!m?.required) continue;
      assert.match(m.help ?? '', /no default:/, `xling ${c.path.join(' ')} --model is required without saying why`);
    }
  });
});

describe('CLI: the commands that take --model run without it (the default model)', () => {
  const tsv = f('nway.tsv');
  writeFileSync(tsv, 'en\tde\n' + en.map((s, i) => `${s}\t${de[i]}`).join('\n') + '\n');
  const docs = f('docs.tsv');
  writeFileSync(docs, en.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`).join('\n') + '\n');
  const cases: [string, string[], RegExp][] = [
    ['scorer train', ['--parallel', tsv, '--rows', String(n), '-o', 'OUT/scorer'], /./],
    ['classify train', ['--data', docs, '-o', 'OUT/clf', '--epochs', '2'], /./],
    ['probe code-switch', ['--data', tsv, '--sentences', '5', '--switch-langs', '1', '--rates', '0.2', '--json', 'OUT/cs.json'], /./],
  ];
  let k = 0;
  for (const [cmd, args] of cases)
    it(`xling ${cmd}`, async () => {
      const r = await run(cmd, args, `m${k++}`);
      assert.equal(r.status, 0, `xling ${cmd}: exit ${r.status}\n${r.stderr}`);
      assert.ok(r.out.length > 0);
    });
  it('xling cluster embed: the default model is taken (the run then stops at the queue, which is not there)', async () => {
    const r = await run(
      'cluster embed',
      ['--input', f('en.txt'), '-o', 'OUT/v.npy', '--redis', 'redis://127.0.0.1:1', '--shards', '2', '--work', 'OUT/w'],
      'c',
    );
    assert.equal(r.status, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /--model/);
    assert.match(r.stderr, /redis/i);
  });
});

describe('xling corpus: catalogs that do not decode, empty catalogs, nothing left to write', () => {
  const po = (lang: string, body: string) => `msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: ${lang}\\n"\n\n${body}`;
  const entry = (id: string, str: string) => `msgid "${id}"\nmsgstr "${str}"\n\n`;
  const folder = f('po');
  mkdirSync(folder);
  const good = [
    ['Open the file in a new window', 'Die Datei in einem neuen Fenster öffnen'],
    ['Save the document before closing', 'Das Dokument vor dem Schließen speichern'],
    ['Print the current page now', 'Die aktuelle Seite jetzt drucken'],
  ];
  // declares UTF-8, holds Latin-1 bytes in one entry (its msgstr: line 10)
  writeFileSync(
    join(folder, 'de.po'),
    Buffer.concat([
      Buffer.from(po('de', entry(good[0]![0]!, good[0]![1]!)), 'utf8'),
      Buffer.from(entry('Greetings from the city of Cologne', 'Grüße aus der Stadt Köln'), 'latin1'),
      Buffer.from(
        good
          .slice(1)
          .map(([a, b]) => entry(a!, b!))
          .join(''),
        'utf8',
      ),
    ]),
  );
  writeFileSync(join(folder, 'fr.po'), '');

  it('an entry that does not decode is reported with file and line and left out; an empty catalog is named; the output has no U+FFFD', async () => {
    const r = await run('corpus', [folder, '-o', 'OUT/c.tsv', '--min-lang-rows', '1', '--no-align', '--quiet', '--stats', '-'], 'p0');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /skipped .*de\.po:10: invalid UTF-8/);
    assert.match(r.stderr, /skipped .*fr\.po: an empty file/);
    assert.doesNotMatch(r.stderr, /Cannot read properties/);
    const out = readFileSync(f('out-p0/c.tsv'), 'utf8');
    assert.doesNotMatch(out, /\uFFFD/);
    for (const [, t] of good) assert.ok(out.includes(t!), `${t} is written`);
    assert.ok(!out.includes('Stadt K'), 'the undecodable entry is left out');
    // --stats -: the summary as JSON on standard output
    const stats = JSON.parse(r.stdout) as { rows: number; skipped: string[] };
    assert.equal(stats.rows, good.length);
    assert.equal(stats.skipped.length, 2);
  });

  it('every language below --min-lang-rows: exit 1 naming the option, no output', async () => {
    const r = await run('corpus', [folder, '-o', 'OUT/c.tsv', '--no-align', '--quiet'], 'p1');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /every language has fewer rows than --min-lang-rows 50 \(the most: de 3\).*give a lower --min-lang-rows/);
    assert.deepEqual(r.out, []);
  });
});
