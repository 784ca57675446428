export * from './fetch.js';
export * from './sniff.js';
