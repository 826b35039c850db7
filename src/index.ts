// Package root: the typed library API.
export * from './tensor/index.js';
export * from './nn/index.js';
