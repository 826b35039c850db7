export * from './module.js';
export * from './layers.js';
export * from './pooling.js';
export * from './optim.js';
export * from './serialize.js';
