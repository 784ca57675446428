export * from './voice.js';
export * from './elevenlabs.js';
export * from './local.js';
export * from './voice.service.js';
