export * from './ssrf.js';
export * from './outbound-http.js';
