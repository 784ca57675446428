export * from './context.js';
export * from './database.js';
export * from './roles.js';
export * from './services.module.js';
export * from './tokens.js';
export * from './metrics.js';
export * from './provider-checks.js';
export * from './engine-census.js';
