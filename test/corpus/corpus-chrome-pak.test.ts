// Chromium's locale packs as translation sources (src/corpus/chrome-pak.ts), made here in the
// layout of Debian's chromium-common and chromium-l10n (usr/lib/chromium/locales/*.pak): grit data
// packs of versions 5 and 4, an alias, a binary resource, strings left in English, ICU plurals and
// `$1` substitutions; a damaged pack refused with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromePakReader, pakLanguage, parsePak } from '../../src/corpus/chrome-pak.js';
import { packageGroups } from '../../src/corpus/debian.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-pak-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const LOCALES = join(tmp, 'usr/lib/chromium/locales');
mkdirSync(LOCALES, { recursive: true });

/** A grit data pack: resources (id, text or bytes) in id order, aliases (id, resource index). */
function pak(version: 4 | 5, resources: [number, string | Buffer][], aliases: [number, number][] = [], encoding = 1): Buffer {
  const bodies = resources.map(([, t]) => (typeof t === 'string' ? Buffer.from(t, encoding === 2 ? 'utf16le' : 'utf8') : t));
  const head = version === 5 ? 12 : 9;
  const table = (resources.length + 1) * 6 + aliases.length * 4;
  const h = Buffer.alloc(head + table);
  h.writeUInt32LE(version, 0);
  if (version === 5) {
    h[4] = encoding;
    h.writeUInt16LE(resources.length, 8);
    h.writeUInt16LE(aliases.length, 10);
  } else {
    h.writeUInt32LE(resources.length, 4);
    h[8] = encoding;
  }
  let offset = head + table;
  resources.forEach(([id], i) => {
    h.writeUInt16LE(id, head + i * 6);
    h.writeUInt32LE(offset, head + i * 6 + 2);
    offset += bodies[i]!.length;
  });
  h.writeUInt32LE(offset, head + resources.length * 6 + 2);
  aliases.forEach(([id, index], i) => {
    h.writeUInt16LE(id, head + (resources.length + 1) * 6 + i * 4);
    h.writeUInt16LE(index, head + (resources.length + 1) * 6 + i * 4 + 2);
  });
  return Buffer.concat([h, ...bodies]);
}

const ENGLISH: [number, string | Buffer][] = [
  [100, 'Open the downloaded file'],
  [101, 'Show all bookmarks'],
  [102, '{COUNT, plural, =1 {1 tab} other {# tabs}}'],
  [103, 'Sign in to $1'],
  [104, Buffer.from([0xff, 0xfe, 0x00, 0xd8])], // not text: an image's bytes
  [105, 'Close the window'],
];
writeFileSync(join(LOCALES, 'en-US.pak'), pak(5, ENGLISH, [[106, 0]]));
const sw = join(LOCALES, 'sw.pak');
writeFileSync(
  sw,
  pak(
    5,
    [
      [100, 'Fungua faili iliyopakuliwa'],
      [101, 'Show all bookmarks'], // left in English
      [102, '{COUNT, plural, =1 {kichupo 1} other {vichupo #}}'],
      [103, 'Ingia katika $1'],
      [105, 'Funga dirisha'],
    ],
    [[106, 0]],
  ),
);
// a version 4 pack in UTF-16
writeFileSync(join(LOCALES, 'pt-BR.pak'), pak(4, [[105, 'Fechar a janela']], [], 2));

test('locale pack names to codes; versions 4 and 5 read, aliases resolved, binary resources skipped', () => {
  assert.deepEqual(
    ['locales/en-US.pak', 'locales/sw.pak', 'locales/pt-BR.pak', 'locales/fil.pak', 'locales/de_FEMININE.pak', 'other/sw.pak', 'locales/xx-YY.pak'].map(
      pakLanguage,
    ),
    ['en', 'sw', 'pt_br', 'fil', undefined, undefined, undefined],
  );
  const en = parsePak(pak(5, ENGLISH, [[106, 0]]), 'en-US.pak');
  assert.equal(en.get(106), 'Open the downloaded file');
  assert.equal(en.has(104), false);
  assert.equal(parsePak(pak(4, [[7, 'Fechar']], [], 2), 'pt-BR.pak').get(7), 'Fechar');
  assert.ok(chromePakReader.accepts(sw, pak(5, [])));
  assert.ok(!chromePakReader.accepts(sw, Buffer.from('PK\u0003\u0004zip')), 'a pak of another format');
});

test('a damaged pack is refused with its reason', () => {
  const good = pak(5, [
    [1, 'a'],
    [2, 'b'],
  ]);
  assert.throws(() => parsePak(good.subarray(0, 20), 'x.pak'), /x\.pak: not a readable grit data pack \(its table of 2 resources runs past the end/);
  const bad = Buffer.from(good);
  bad.writeUInt32LE(10_000, 12 + 6 + 2);
  assert.throws(() => parsePak(bad, 'x.pak'), /resource 1's offset 10000 is outside the data/);
  const v3 = Buffer.from(good);
  v3.writeUInt32LE(3, 0);
  assert.throws(() => parsePak(v3, 'x.pak'), /version 3; versions 4 and 5 are read/);
  assert.throws(() => parsePak(pak(5, [[1, 'a']], [[9, 4]]), 'x.pak'), /alias 9 names resource 4 of 1/);
});

test('xling corpus over the locales folder: each pack paired with en-US.pak by id; English fill-ins, plurals and substitutions left out', async () => {
  const built = await corpusRows([tmp], join(tmp, 'pak.tsv.gz'));
  assert.deepEqual(built.rows[0], ['en', 'pt_br', 'sw', '#source']);
  const rows = new Map(built.rows.slice(1).map((r) => [r[0]!, r.slice(1, 3)]));
  assert.deepEqual(rows.get('Open the downloaded file'), ['', 'Fungua faili iliyopakuliwa']);
  assert.deepEqual(rows.get('Close the window'), ['Fechar a janela', 'Funga dirisha']);
  assert.equal(rows.size, 2, [...rows.keys()].join(' | '));
  // chromium-common (en-US.pak) and chromium-l10n unpack into one tree
  assert.deepEqual(
    [...packageGroups(['chromium-common', 'chromium-l10n', 'pidgin-data'])],
    [
      ['chromium-common', 'chromium'],
      ['chromium-l10n', 'chromium'],
      ['pidgin-data', 'pidgin-data'],
    ],
  );
});
