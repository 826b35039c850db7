// Fish Fillets NG dialogues as translation sources (src/corpus/fillets.ts), made here in the
// layout of Debian's fillets-ng-data: a level's English dialogue file and its translations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filletsDialogues, filletsLanguage, filletsReader } from '../../src/corpus/fillets.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-fillets-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const LEVEL = join(tmp, 'usr/share/games/fillets-ng/script/city');
mkdirSync(LEVEL, { recursive: true });
writeFileSync(
  join(LEVEL, 'dialogs_en.lua'),
  [
    '',
    'dialogId("vit-hs-klid1", "font_statue", "Citizens, please remain calm.")',
    '',
    'dialogId("vit-x-beg", "", "")',
    '',
    'dialogId("war-v-pohadka", "font_big", "We meet in the C:\\\\WINDOWS directory and talk.")',
    '',
  ].join('\n'),
);
const CS = [
  '',
  'dialogId("vit-hs-klid1", "font_statue", "Citizens, please remain calm.")',
  'dialogStr("Občané. Zachovejte klid a rozvahu.")',
  '',
  'dialogId("vit-m-kde", "font_small", "Where are you running?")',
  'dialogStr("Kam běžíš?")',
  '',
  'dialogId("war-v-pohadka", "font_big", "We meet in the C:\\\\WINDOWS directory and talk.")',
  'dialogStr("Scházíme se v adresáři C:\\\\WINDOWS a povídáme si.")',
  '',
  'dialogId("vit-hs-ok", "font_statue", "There is no imminent danger.")',
  'dialogStr("There is no imminent danger.")',
  '',
  'dialogId("vit-hs-quote", "font_statue", "He said \\"hello\\" to the\\ncrowd.")',
  'dialogStr(',
  '"Řekl \\"ahoj\\" davu.")',
  '',
].join('\n');
writeFileSync(join(LEVEL, 'dialogs_cs.lua'), CS);
writeFileSync(join(LEVEL, 'dialogs_de_CH.lua'), 'dialogId("vit-m-kde", "font_small", "Where are you running?")\ndialogStr("Wohin rennst du?")\n');

test('dialogue files: the language from the name (regional variants folded into their language left out); each dialogId paired with the dialogStr after it, Lua escapes decoded', () => {
  assert.deepEqual(['dialogs_cs.lua', 'dialogs_en.lua', 'dialogs_pt_BR.lua', 'dialogs_de_CH.lua', 'dialogs_xx.lua', 'code.lua'].map(filletsLanguage), [
    'cs',
    'en',
    'pt_br',
    undefined,
    undefined,
    undefined,
  ]);
  const d = filletsDialogues(CS);
  assert.equal(d.length, 5);
  assert.deepEqual(d[2], ['war-v-pohadka', 'We meet in the C:\\WINDOWS directory and talk.', 'Scházíme se v adresáři C:\\WINDOWS a povídáme si.']);
  assert.deepEqual(d[4], ['vit-hs-quote', 'He said "hello" to the\ncrowd.', 'Řekl "ahoj" davu.']);
  assert.ok(filletsReader.accepts(join(LEVEL, 'dialogs_cs.lua'), Buffer.from(CS)));
  assert.ok(!filletsReader.accepts(join(LEVEL, 'dialogs_cs.lua'), Buffer.from('-- no dialogue here\n')));
});

test('xling corpus over the game tree: the translated lines through English; an untranslated line, a regional variant and the English file give nothing', async () => {
  const built = await corpusRows([tmp], join(tmp, 'f.tsv.gz'));
  assert.deepEqual(built.problems, []);
  assert.deepEqual(built.rows[0], ['en', 'cs', '#source']);
  assert.deepEqual(
    built.rows
      .slice(1)
      .map((r) => `${r[0]}=${r[1]}`)
      .sort(),
    [
      'Citizens, please remain calm.=Občané. Zachovejte klid a rozvahu.',
      'He said "hello" to the crowd.=Řekl "ahoj" davu.',
      'We meet in the C:\\WINDOWS directory and talk.=Scházíme se v adresáři C:\\WINDOWS a povídáme si.',
      'Where are you running?=Kam běžíš?',
    ],
  );
});
