export * from './ssrf.js';
export * from './outbound-http.js';
export * from './scavenge.js';
