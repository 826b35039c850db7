// The dev sets the dual-encoder scripts report on: the trainer's own check (gettext dev, its default
// 12 languages), the game-dialogue dev set (another domain, 8 languages), and the everyday rows of a
// harvest's held-out documents; X→en and en→X pairs.
import { defaultConfig, devSetOf, loadNWayTsv } from 'xling';

export const DIALOGUE_LANGS = ['de', 'fr', 'es', 'ru', 'it', 'pt_br', 'cs', 'sv'];

export async function coreDevSets(devFile = '../shared/data/gettext/dev.tsv.gz', dialogueFile = '../shared/data/dialogue/dev.tsv.gz') {
  const { langs, maxRows } = defaultConfig().validate;
  return {
    gettext: devSetOf(await loadNWayTsv(devFile), langs, 200, maxRows),
    dialogue: devSetOf(await loadNWayTsv(dialogueFile), DIALOGUE_LANGS, 200, 100000),
  };
}

/** A text's key for telling whether a training corpus holds it: lower case, final punctuation off. */
const textKey = (s) =>
  s
    .toLowerCase()
    .replace(/[.!?。！？]+$/u, '')
    .trim();

/**
 * The everyday rows of a held-out dev set: English of at most maxWords words that no training
 * corpus of `excludes` holds; every language with at least minRows of them (at most maxRows).
 * Returns the rows kept and the set (language → { src, en }).
 */
export async function everydayDevSet(file, excludes = [], { maxWords = 15, minRows = 50, maxRows = 1000 } = {}) {
  const trained = new Set();
  for (const f of excludes) for (const r of (await loadNWayTsv(f)).rows) if (r.get('en')) trained.add(textKey(r.get('en')));
  const dev = await loadNWayTsv(file);
  const words = (s) => s.split(/\s+/).filter(Boolean).length;
  const rows = dev.rows.filter((r) => r.get('en') && words(r.get('en')) <= maxWords && !trained.has(textKey(r.get('en'))));
  const pairs = new Map();
  for (const l of dev.langs) {
    if (l === 'en') continue;
    const mine = rows.filter((r) => r.get(l)).slice(0, maxRows);
    if (mine.length >= minRows) pairs.set(l, { src: mine.map((r) => r.get(l)), en: mine.map((r) => r.get('en')) });
  }
  return { rows: rows.length, pairs };
}
