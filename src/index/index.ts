export * from './faiss.js';
