export * from './speech.js';
export * from './providers/index.js';
