export * from './binaries.js';
export * from './fetch.js';
export * from './probe.js';
export * from './sniff.js';
export * from './stored.js';
export * from './durations.js';
