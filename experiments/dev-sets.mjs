// The dev sets the dual-encoder scripts report on: the trainer's own check (gettext dev, its default
// 12 languages) and the game-dialogue dev set (another domain, 8 languages), X→en and en→X pairs.
import { defaultConfig, devSetOf, loadNWayTsv } from 'xling';

export const DIALOGUE_LANGS = ['de', 'fr', 'es', 'ru', 'it', 'pt_br', 'cs', 'sv'];

export async function coreDevSets(devFile = '../shared/data/gettext/dev.tsv.gz', dialogueFile = '../shared/data/dialogue/dev.tsv.gz') {
  const { langs, maxRows } = defaultConfig().validate;
  return {
    gettext: devSetOf(await loadNWayTsv(devFile), langs, 200, maxRows),
    dialogue: devSetOf(await loadNWayTsv(dialogueFile), DIALOGUE_LANGS, 200, 100000),
  };
}
