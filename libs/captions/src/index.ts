export * from './speech.js';
export * from './cues.js';
export * from './local.js';
