// The progress lines of a scorer's passes over mining candidates (xling mine, scorer score).
import { Progress } from '../util/progress.js';

/**
 * Progress of a scorer's passes over the candidates (ScoringOptions.onCandidates): a bar for each
 * pass, one after another — the k-NN's and the pair model's bars are their own.
 */
export function candidateProgress(): (done: number, total: number, pass: number) => void {
  let feats: Progress | null = null;
  return (done, total, pass) => {
    if (done === 0 && !feats) feats = new Progress({ label: pass ? 'scorer features, with the word tables' : 'scorer features', unit: 'candidates', total });
    feats?.set(done);
    if (done === total) {
      feats?.done();
      feats = null;
    }
  };
}
