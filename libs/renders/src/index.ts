export * from './entities.js';
export * from './pricing.js';
export * from './request.js';
export * from './renders.service.js';
export * from './errors.js';
export * from './lifecycle.js';
export * from './shotstack.js';
