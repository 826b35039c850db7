// The second-stage mining scorer (Yang et al. 2019, §5): the margin retrieves candidates, a small
// learned classifier re-scores them from what the margin cannot see. By concern: its features and
// candidates (features.ts), the logistic regression (logistic.ts), one-to-one assignment
// (assignment.ts), word tables for a run's language pair (tables.ts), the optional pair model
// (pair-model.ts, its words pair-words.ts, its training pair-train.ts), training (train.ts),
// scoring and mining with it (score.ts), and the files (files.ts); a parallel corpus scored pair by
// pair (score-corpus.ts: read in passes, corpus-passes.ts; its blocks kept, block-store.ts; against
// its labels, label-eval.ts).
export * from './features.js';
export * from './logistic.js';
export * from './assignment.js';
export * from './tables.js';
export * from './pair-model.js';
export * from './pair-words.js';
export * from './pair-train.js';
export * from './train.js';
export * from './score.js';
export * from './files.js';
export * from './corpus-passes.js';
export * from './block-store.js';
export * from './label-eval.js';
export * from './score-corpus.js';
