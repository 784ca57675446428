export * from './orm.js';
export * from './busy.js';
export * from './prepared.js';
