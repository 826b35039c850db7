import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { normalize, romanize } from '../../src/text/normalize.js';
import { learnBpe, preTokenize } from '../../src/text/bpe.js';
import { Tokenizer } from '../../src/text/tokenizer.js';
import { digamma, learnUnigram } from '../../src/text/unigram.js';
import { loadNWayTsv, readBucc, readGold, readMoses, readSentences } from '../../src/train-data/corpus.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sample = join(root, 'data', 'sample');

describe('normalisation', () => {
  it('NFKC, punctuation, whitespace, lowercase, romanisation', () => {
    assert.equal(normalize('  ＡＢＣ\u00A0“Quoted”\t—  text…  '), 'abc "quoted" - text...');
    assert.equal(normalize('Ｈello', { lowercase: false }), 'Hello');
    assert.equal(normalize('a\u200bb\u0007c'), 'ab c');
    assert.equal(romanize('Москва'), 'Moskva');
    assert.equal(romanize('Αθήνα'), 'Athina');
    assert.equal(normalize('Щука и Ελλάδα', { romanize: true }), 'shchuka i ellada');
  });
});

describe('BPE', () => {
  it('learns frequent merges first and respects the vocabulary size', () => {
    const counts = new Map<string, number>();
    for (const w of preTokenize('low low low lower lowest newer newer wider')) counts.set(w, (counts.get(w) ?? 0) + 1);
    const m = learnBpe(counts, { vocabSize: 4 + 20, specials: 4, characterCoverage: 1 });
    assert.ok(m.symbols.length <= 20 && m.symbols.length > 15, String(m.symbols.length)); // stops early when no pair occurs twice
    assert.deepEqual(m.merges[0], ['▁', 'l']); // '▁l' occurs 5 times (ties broken by id)
    assert.ok(m.symbols.includes('▁low'));
    assert.throws(() => learnBpe(counts, { vocabSize: 6, specials: 4 }), /smaller than the alphabet/);
  });

  it('trains a joint tokenizer whose tokenizer.json HF loads and encodes identically', async () => {
    const t = await loadNWayTsv(join(sample, 'gettext.train.tsv.gz'));
    const byLang = new Map(t.langs.map((l) => [l, t.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
    const tok = Tokenizer.train(byLang, { vocabSize: 3000, seed: 1, sampleSentences: 20000 });
    assert.equal(tok.vocabSize, 3000);
    const dir = mkdtempSync(join(tmpdir(), 'xling-tok-'));
    try {
      tok.save(join(dir, 'tokenizer.json'));
      const again = Tokenizer.load(join(dir, 'tokenizer.json'));
      const dev = await loadNWayTsv(join(sample, 'gettext.dev.tsv.gz'));
      const sents = dev.rows.slice(0, 40).flatMap((r) => [...r.values()]);
      const hf = await again.encodeBatchHF(sents);
      let unk = 0,
        total = 0;
      sents.forEach((s, i) => {
        const ids = tok.encode(s);
        assert.deepEqual(Array.from(again.encode(s)), Array.from(ids), 'same after save/load');
        assert.deepEqual(Array.from(hf[i]!), Array.from(ids), `HF encodes '${s}' identically`);
        assert.equal(ids[ids.length - 1], tok.eosId);
        assert.ok(ids.length <= 64);
        unk += ids.filter((x) => x === tok.unkId).length;
        total += ids.length;
      });
      assert.ok(unk / total < 0.01, `unknown rate ${unk / total}`);
      assert.equal(tok.decode(tok.encode('Cannot open the file')), 'cannot open the file');
      assert.ok(tok.encode('word '.repeat(200)).length === 64, 'truncated to maxLen');
      // a 2 MB line without spaces is cut at 8 × maxLen characters before it is segmented (one
      // 2M-character "word" took 16 s): the same ids as its first 512 characters, counted as cut
      // (checked by what the segmenter is handed, not by the clock: the longest word it sees)
      const spied = tok as unknown as { encodeWord: (w: string) => number[] },
        encodeWord = spied.encodeWord;
      let longest = 0;
      spied.encodeWord = (w) => {
        longest = Math.max(longest, w.length);
        return encodeWord.call(tok, w);
      };
      const cut0 = tok.truncated;
      const huge = tok.encode('x'.repeat(2_000_000));
      delete (spied as { encodeWord?: unknown }).encodeWord;
      assert.ok(longest > 0 && longest <= tok.maxChars + 1, `(with its word-start mark) the segmenter saw a word of ${longest} characters`);
      assert.deepEqual(Array.from(huge), Array.from(tok.encode('x'.repeat(512))));
      assert.equal(tok.truncated, cut0 + 2);
      tok.encode('Cannot open the file');
      assert.equal(tok.truncated, cut0 + 2, 'a short sentence is not counted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('learns a unigram vocabulary: EM + pruning to the requested size, HF Unigram encodes identically', async () => {
    // toy: frequent whole words survive as pieces; scores are log-probabilities
    const counts = new Map<string, number>();
    for (const w of preTokenize('low low low lower lowest newer newer wider the the the the')) counts.set(w, (counts.get(w) ?? 0) + 1);
    const toy = learnUnigram(counts, { vocabSize: 4 + 16, specials: 4, characterCoverage: 1 });
    assert.equal(toy.pieces.length, 16);
    assert.ok(
      ['▁the', '▁low', '▁newer'].every((p) => toy.pieces.includes(p)),
      toy.pieces.join(' '),
    );
    // a vocabulary larger than the useful pieces stops early (pieces seen less than once are dropped)
    assert.ok(learnUnigram(counts, { vocabSize: 4 + 40, specials: 4, characterCoverage: 1 }).pieces.length < 40);
    assert.ok(
      toy.scores.every((s, i) => s < 0 && (i === 0 || s <= toy.scores[i - 1]!)),
      'sorted log-probabilities',
    );
    assert.ok(Math.abs(digamma(1) + 0.5772156649) < 1e-9 && Math.abs(digamma(10) - 2.2517525891) < 1e-9);
    // real sample: HF's own Unigram model (from our tokenizer.json) gives the same ids
    const t = await loadNWayTsv(join(sample, 'gettext.train.tsv.gz'));
    const byLang = new Map(t.langs.map((l) => [l, t.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
    const tok = Tokenizer.train(byLang, { model: 'unigram', vocabSize: 2000, seed: 1, sampleSentences: 8000 });
    assert.equal(tok.vocabSize, 2000);
    assert.equal(tok.model, 'unigram');
    const dir = mkdtempSync(join(tmpdir(), 'xling-uni-'));
    try {
      tok.save(join(dir, 'tokenizer.json'));
      const again = Tokenizer.load(join(dir, 'tokenizer.json'));
      assert.equal(again.model, 'unigram');
      const dev = await loadNWayTsv(join(sample, 'gettext.dev.tsv.gz'));
      const sents = [...dev.rows.slice(0, 40).flatMap((r) => [...r.values()]), 'emoji 🙂🙂 and ☃ unknown ꙮ'];
      const hf = await again.encodeBatchHF(sents);
      let pieces = 0,
        chars = 0;
      sents.forEach((s, i) => {
        const ids = tok.encode(s);
        assert.deepEqual(Array.from(again.encode(s)), Array.from(ids), 'same after save/load');
        assert.deepEqual(Array.from(hf[i]!), Array.from(ids), `HF encodes '${s}' identically`);
        pieces += ids.length - 1;
        chars += s.length;
      });
      // measured 2.02 characters per piece (BPE of the same size: 2.05; characters alone: 1)
      assert.ok(chars / pieces > 1.8, `pieces are subwords, not characters: ${(chars / pieces).toFixed(2)} chars/piece`);
      assert.equal(tok.decode(tok.encode('Cannot open the file')), 'cannot open the file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('corpus readers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xling-corpus-'));
  const f = (name: string, data: string | Buffer) => {
    const p = join(dir, name);
    writeFileSync(p, data);
    return p;
  };
  it('reads N-way TSV (gz), BUCC, gold, plain/BUCC sentences, Moses', async () => {
    const t = await loadNWayTsv(f('a.tsv.gz', gzipSync('en\tde\tfr\nhello\thallo\t\nbye\t\tsalut\n')));
    assert.deepEqual(t.langs, ['en', 'de', 'fr']);
    assert.equal(t.rows.length, 2);
    assert.equal(t.rows[0]!.get('de'), 'hallo');
    assert.equal(t.rows[0]!.has('fr'), false);
    const b = await readBucc(f('x.de', 'de-1\tHallo\r\nde-2\tWelt\n'));
    assert.deepEqual(
      b.map((s) => [s.id, s.sentence]),
      [
        ['de-1', 'Hallo'],
        ['de-2', 'Welt'],
      ],
    );
    assert.deepEqual(await readGold(f('g', 'de-1\ten-9\n')), [['de-1', 'en-9']]);
    assert.equal((await readSentences(f('p.txt', 'one\ntwo\n'))).bucc, false);
    assert.equal((await readSentences(f('q.txt', 'a\tone\nb\ttwo\n'))).bucc, true);
    f('m.de', 'a\nb\n');
    f('m.en', 'x\ny\n');
    assert.deepEqual((await readMoses(join(dir, 'm'), 'de', 'en')).trg, ['x', 'y']);
  });
  it('bad input: errors name the file and line', async () => {
    await assert.rejects(loadNWayTsv(f('c.tsv', 'en\tde\nhello\n')), /c\.tsv:2: 1 columns, header has 2/);
    await assert.rejects(
      loadNWayTsv(f('u.tsv', Buffer.concat([Buffer.from('en\tde\nok\t'), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]))),
      /u\.tsv:2: invalid UTF-8/,
    );
    await assert.rejects(
      loadNWayTsv(f('h.tsv', 'hello world\n')),
      /h\.tsv:1: not an N-way TSV \(its first line 'hello world' is not a header of language codes\)/,
    );
    await assert.rejects(loadNWayTsv(f('e.tsv', '')), /empty file/);
    await assert.rejects(readBucc(f('d.de', 'a\tx\na\ty\n')), /d\.de:2: duplicate id 'a'/);
    await assert.rejects(readBucc(f('n.de', 'nota bucc line\n')), /n\.de:1: expected id<TAB>sentence/);
    // a long line is no error (lines are cut only at MAX_LINE_CHARS, src/io/lines.ts)
    assert.equal((await readBucc(f('l.de', `a\t${'x'.repeat(30000)}\n`)))[0]!.sentence.length, 30000);
    f('k.de', 'a\nb\n');
    f('k.en', 'x\n');
    await assert.rejects(readMoses(join(dir, 'k'), 'de', 'en'), /k\.de has 2 lines but .*k\.en has 1/);
    await assert.rejects(loadNWayTsv(join(dir, 'missing.tsv')), /no such file/);
    // gzip is known by its magic bytes, not the name: a .gz of plain text is read as text, and gzip bytes with a broken header are an error naming the file
    await assert.rejects(loadNWayTsv(f('z.tsv.gz', 'not gzip')), /z\.tsv\.gz:1: not an N-way TSV \(its first line 'not gzip'/);
    await assert.rejects(
      loadNWayTsv(f('zb.tsv', Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from('not gzip')]))),
      /zb\.tsv.*(unknown compression method|incorrect header|corrupt)/,
    );
    const gz = gzipSync('en\tde\n' + 'hello\thallo\n'.repeat(5000));
    await assert.rejects(
      loadNWayTsv(f('cut.tsv.gz', gz.subarray(0, gz.length - 30))),
      /cut\.tsv\.gz: corrupt or truncated gzip data \(unexpected end of file\)/,
    );
  });
});
