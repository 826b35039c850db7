// FreeDict dictionaries as translation sources (src/corpus/dictd.ts, src/corpus/freedict.ts):
// dictd index + dictzip data in the layout of Debian's dict-freedict-XXX-YYY packages, with entries
// written as FreeDict's stylesheets render them (the forms seen in its Swahili, Slovenian, Finnish,
// Polish and Hindi dictionaries).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { decodeDictdNumber } from '../../src/corpus/dictd.js';
import { freedictLang, freedictLangs, freedictPairs, freedictReader, parseFreedictEntry } from '../../src/corpus/freedict.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-freedict-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function b64(n: number): string {
  let s = '';
  do {
    s = B64[n % 64] + s;
    n = Math.floor(n / 64);
  } while (n > 0);
  return s;
}

/** gzip with dictzip's random-access extra field (`RA`: version 1, chunk length, chunk count, chunk sizes), as dictzip writes it. */
function dictzip(data: Buffer): Buffer {
  const gz = gzipSync(data);
  const ra = Buffer.alloc(10);
  ra.write('RA', 0, 'latin1');
  ra.writeUInt16LE(6, 2);
  ra.writeUInt16LE(1, 4); // version
  ra.writeUInt16LE(58315, 6); // chunk length
  ra.writeUInt16LE(1, 8); // one chunk (its size is not checked by gunzip)
  const xlen = Buffer.alloc(2);
  xlen.writeUInt16LE(ra.length);
  const header = Buffer.from(gz.subarray(0, 10));
  header[3] = header[3]! | 4; // FEXTRA
  return Buffer.concat([header, xlen, ra, gz.subarray(10)]);
}

/** Writes NAME.index and NAME.dict.dz for [index headword, entry text] pairs; returns the index path. */
function writeDict(dir: string, name: string, entries: [string, string][], extraIndex: string[] = []): string {
  mkdirSync(dir, { recursive: true });
  const parts: Buffer[] = [];
  const index: string[] = [];
  let offset = 0;
  for (const [head, text] of entries) {
    const b = Buffer.from(text, 'utf8');
    index.push(`${head}\t${b64(offset)}\t${b64(b.length)}`);
    parts.push(b);
    offset += b.length;
  }
  writeFileSync(join(dir, `${name}.dict.dz`), dictzip(Buffer.concat(parts)));
  writeFileSync(join(dir, `${name}.index`), [...index, ...extraIndex].sort().join('\n') + '\n');
  return join(dir, `${name}.index`);
}

const header = (title: string, source = 'This Database was generated from Ergane.'): [string, string][] => [
  ['00databaseinfo', `${title}\n\nAvailability:\n\n    Available under the terms of the GNU General Public License.\n\nSource(s):\n\n  ${source}\n`],
  ['00databaseshort', `${title} ver. 0.1\n`],
];

async function read(file: string): Promise<{ pairs: [string, string][][]; problems: SourceProblem[] }> {
  const problems: SourceProblem[] = [];
  const pairs = [];
  for await (const u of freedictReader.read(file, { onProblem: (p) => problems.push(p) })) pairs.push([...u.texts]);
  return { pairs, problems };
}

test('dictd numbers are base 64, most significant digit first', () => {
  assert.equal(decodeDictdNumber('A'), 0);
  assert.equal(decodeDictdNumber('B'), 1);
  assert.equal(decodeDictdNumber('BA'), 64);
  assert.equal(decodeDictdNumber('T8'), 19 * 64 + 60);
  assert.equal(decodeDictdNumber('Lw7Y'), 11 * 64 ** 3 + 48 * 64 ** 2 + 59 * 64 + 24);
  assert.equal(decodeDictdNumber('12.5'), undefined);
  assert.equal(decodeDictdNumber(''), undefined);
});

test('FreeDict file names: ISO 639-3 codes to the corpus codes', () => {
  assert.deepEqual(freedictLangs('/usr/share/dictd/freedict-ara-eng.index'), ['ar', 'en']);
  assert.deepEqual(freedictLangs('freedict-eng-swh.index'), ['en', 'sw']);
  assert.deepEqual(['kur', 'gle', 'cym', 'lat', 'epo', 'ell', 'bul', 'ind', 'isl', 'hin', 'nor', 'rom', 'kha'].map(freedictLang), [
    'ku',
    'ga',
    'cy',
    'la',
    'eo',
    'el',
    'bg',
    'id',
    'is',
    'hi',
    'nb',
    'ro',
    'kha',
  ]);
  assert.equal(freedictLangs('freedict-ara-eng.dict.dz'), undefined);
  assert.equal(freedictLangs('freedict-qqq-eng.index'), undefined, 'not a language');
  assert.equal(freedictLangs('wordnet-ara-eng.index'), undefined);
});

test('entries: the first translation of each sense; pronunciation, grammar, definitions, notes and cross-references dropped; examples and phrases paired', () => {
  // Swahili–English: senses numbered, the translations on the line after the number; a continuation line
  const agiza = parseFreedictEntry(
    'agiza /aɡˈiza/ <v, caus>\n1.\norder, command, instruct\n; direct, instruct, give instructions\n2.\nplace an order\n   See also: {amri}\n',
  );
  assert.deepEqual(agiza, { headword: 'agiza', senses: ['order', 'place an order'], phrases: [], examples: [] });
  // a plural's cross-reference is no translation
  assert.deepEqual(parseFreedictEntry('viatu /viˈatu/ <n>\n\n Plural of {kiatu}: shoe\n\n').senses, []);
  // Slovenian–English: a usage label, an example with its translation
  const a = parseFreedictEntry('a /ˈaː/ <conj>\n [lit] but, however\n      "Šel bo plavat, a ne danes."  - He will go swimming, but not today.\n');
  assert.deepEqual(a.senses, ['but']);
  assert.deepEqual(a.examples, [['Šel bo plavat, a ne danes.', 'He will go swimming, but not today.']]);
  // English–Finnish (WikDict): a definition after each sense's translations; a nested sense with only a definition
  const abandon = parseFreedictEntry(
    'abandon //əˈbæn.dən// <v>\n1. ajaa pois\nto cast out, expel, reject\n2. luovuttaa 2.\nto desist in doing\n 3.\nto surrender to the insurer\n3. hylätä, antautua\nto give up control of\n',
  );
  assert.deepEqual(abandon.senses, ['ajaa pois', 'luovuttaa', 'hylätä']);
  // English–Polish: roman-numbered parts of speech, a phrase with its translation on the next line or after spaces
  const abide = parseFreedictEntry(
    'abide /əˈbaɪd/\nI.  <V> 1.  trwać\n 2.  cannot abide (:can NEG :abide)\n - nie znosić\nII.  <V Phras>abide by   stosować się do\n',
  );
  assert.deepEqual(abide, {
    headword: 'abide',
    senses: ['trwać'],
    phrases: [
      ['cannot abide', 'nie znosić'],
      ['abide by', 'stosować się do'],
    ],
    examples: [],
  });
  // several orthographies: the first; Hindi's `~` between words; an example without translation is left out
  const mg = parseFreedictEntry('milligram, milligramme /ˈmɪlɪgrəm/ <N>\n  miligram\n');
  assert.deepEqual([mg.headword, mg.senses], ['milligram', ['miligram']]);
  const aband = parseFreedictEntry('abandon /ɐbˈandən/ <V>\n1. छोड़~देना\n      "A baby abandoned by its parents was found here."\n');
  assert.deepEqual([aband.senses, aband.examples], [['छोड़ देना'], []]);
  // with an English headword only the first sense is paired (the corpus keeps one translation per English text)
  assert.deepEqual(
    freedictPairs(abandon, true).map((p) => p.pair),
    [['abandon', 'ajaa pois']],
  );
  assert.deepEqual(
    freedictPairs(agiza, false).map((p) => p.pair),
    [
      ['agiza', 'order'],
      ['agiza', 'place an order'],
    ],
  );
  // affixes and a text left with half a bracket pair are not translations
  assert.deepEqual(freedictPairs(parseFreedictEntry('-ebl- /ˈebl/\ndenotes possibility\n'), false), []);
});

test('a FreeDict pair of dictionaries in a Debian tree: both directions merged through English; an English sentence in a Hindi sense is left out', async () => {
  const root = join(tmp, 'pkg');
  const dictd = join(root, 'usr/share/dictd');
  writeDict(dictd, 'freedict-swh-eng', [
    ...header('Swahili-English xFried/FreeDict Dictionary'),
    ['chui', 'chui /tʃˈui/ <n> [sg=pl]\n\nleopard\n'],
    ['rafiki', 'rafiki /rafˈiki/ <n>\n\nfriend\n      "Yeye ni rafiki yangu."  - She is my friend.\n'],
    ['shuka', 'shuka /ʃˈuka/ <v>\n\ndescend, get off\n'],
  ]);
  writeDict(dictd, 'freedict-eng-swh', [
    ...header('English-Swahili xFried/FreeDict Dictionary'),
    ['leopard', 'leopard /lˈɛpəd/ <n>\n\nchui\n'],
    ['glass', 'glass /ɡlˈas/ <n>\n\nkioo\n'],
  ]);
  writeDict(dictd, 'freedict-eng-hin', [
    ...header('English-Hindi FreeDict Dictionary'),
    ['a few', 'a few /ɐ fjˈuː/ <Det>\n1. कुछ\n2.  In the party only a few persons were known to me\n'],
    ['plenty', 'plenty /plˈɛnti/ <N>\n1.  There is plenty of food\n'],
  ]);
  writeFileSync(join(dictd, 'README'), 'not a dictionary\n');
  const built = await corpusRows([root], join(tmp, 'freedict.tsv.gz'));
  assert.deepEqual(built.problems, []);
  const head = built.rows[0]!;
  assert.deepEqual(head, ['en', 'hi', 'sw', '#source']);
  const rows = built.rows.slice(1).map((r) => r.slice(0, 3).join('|'));
  assert.deepEqual(rows.sort(), ['She is my friend.||Yeye ni rafiki yangu.', 'a few|कुछ|', 'descend||shuka', 'friend||rafiki', 'glass||kioo', 'leopard||chui']);
  assert.equal(built.summary.files, 3);
});

test('a dictionary derived from Tatoeba is refused, by its header', async () => {
  const file = writeDict(join(tmp, 'tatoeba'), 'freedict-eng-isl', [
    ...header('English-Icelandic FreeDict Dictionary', 'The sentences come from the Tatoeba project (https://tatoeba.org).'),
    ['dog', 'dog /dˈɒɡ/\nhundur\n'],
  ]);
  await assert.rejects(read(file), /freedict-eng-isl\.index: the dictionary says it is derived from the Tatoeba project/);
});

test('corrupt dictionaries: bad index lines reported with their line, an entry that is not UTF-8 skipped; a truncated .dict.dz and an entry past the end are errors', async () => {
  const dir = join(tmp, 'bad');
  const entries: [string, string][] = [...header('Kurdish-English FreeDict Dictionary'), ['çem', 'çem /tʃɛm/\nriver\n'], ['nivîn', 'nivîn /nɪvˈiːn/\nbed\n']];
  const file = writeDict(dir, 'freedict-kur-eng', entries, ['broken line without offsets', 'xyz\t!!\tB']);
  const { pairs, problems } = await read(file);
  assert.deepEqual(pairs, [
    [
      ['ku', 'çem'],
      ['en', 'river'],
    ],
    [
      ['ku', 'nivîn'],
      ['en', 'bed'],
    ],
  ]);
  assert.deepEqual(
    problems.map((p) => [p.line, p.message.slice(0, 25)]),
    [
      [3, 'not a dictd index line (h'],
      [5, 'not a dictd index line (h'],
    ],
  );
  // an entry of bytes that are not UTF-8
  const latin = join(tmp, 'latin');
  mkdirSync(latin);
  const text = Buffer.concat([
    Buffer.from(header('Turkish-English FreeDict Dictionary')[0]![1]),
    Buffer.from('balta\naxe\n'),
    Buffer.from([0x67, 0xfc, 0x6c, 0x0a]),
  ]);
  const infoLen = Buffer.byteLength(header('Turkish-English FreeDict Dictionary')[0]![1]);
  writeFileSync(join(latin, 'freedict-tur-eng.dict.dz'), dictzip(text));
  writeFileSync(
    join(latin, 'freedict-tur-eng.index'),
    [`00databaseinfo\tA\t${b64(infoLen)}`, `balta\t${b64(infoLen)}\tK`, `gül\t${b64(infoLen + 10)}\tE`].join('\n') + '\n',
  );
  const l = await read(join(latin, 'freedict-tur-eng.index'));
  assert.deepEqual(l.pairs, [
    [
      ['tr', 'balta'],
      ['en', 'axe'],
    ],
  ]);
  assert.deepEqual(
    l.problems.map((p) => [p.line, p.message]),
    [[3, `the entry at byte ${infoLen + 10} of freedict-tur-eng.dict.dz is not UTF-8; skipped`]],
  );
  // a truncated compressed file: an error naming it and the byte, after the entries read before the fault
  const gz = readFileSync(join(dir, 'freedict-kur-eng.dict.dz'));
  writeFileSync(join(dir, 'freedict-kur-eng.dict.dz'), gz.subarray(0, gz.length - 12));
  await assert.rejects(read(file), /freedict-kur-eng\.dict\.dz: corrupt compressed data near byte \d+/);
  writeFileSync(join(dir, 'freedict-kur-eng.dict.dz'), Buffer.from('not gzip at all'));
  // not gzip: read as a plain .dict, whose entries then lie past its end
  await assert.rejects(read(file), /freedict-kur-eng\.index:\d+: the entry at bytes \d+–\d+ lies past the end of .*freedict-kur-eng\.dict\.dz \(15 bytes\)/);
});

test('the reader takes freedict-XXX-YYY.index files that have their data beside them', () => {
  const dir = join(tmp, 'accepts');
  const file = writeDict(dir, 'freedict-gle-eng', [['eala', 'eala /ˈalə/\nswan\n']]);
  assert.ok(freedictReader.accepts(file, Buffer.alloc(0)));
  assert.ok(!freedictReader.accepts(join(dir, 'freedict-gle-eng.dict.dz'), Buffer.alloc(0)));
  writeFileSync(join(dir, 'freedict-cym-eng.index'), 'x\tA\tB\n');
  assert.ok(!freedictReader.accepts(join(dir, 'freedict-cym-eng.index'), Buffer.alloc(0)), 'no data file');
});
