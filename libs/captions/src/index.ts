export * from './speech.js';
export * from './providers/index.js';
export * from './cues.js';
export * from './local.js';
