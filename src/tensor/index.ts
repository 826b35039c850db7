export * from './dtype.js';
export * from './tensor.js';
export * from './ops.js';
export * from './gradcheck.js';
