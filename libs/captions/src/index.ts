export * from './speech.js';
// The rate and WAV wrapping of the PCM the local engine reads (test/fakes/captions.ts synthesizes recordings with them).
export { PCM_RATE } from './pcm.js';
export { wavOf } from './providers/split.js';
export * from './providers/index.js';
export * from './cues.js';
export * from './local.js';
export * from './entities.js';
export * from './capability.js';
export * from './cache-key.js';
export * from './url-memory.js';
export * from './transcriptions.service.js';
export * from './captions.service.js';
export * from './runner.js';
export * from './engines.js';
export * from './auto-captions.js';
export { captionSources } from './sources.js';
