// Tensor element types: the one dtype table lives in src/util/dtype.ts (the io layer reads it too).
export * from '../util/dtype.js';
