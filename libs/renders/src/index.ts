export * from './entities.js';
export * from './pricing.js';
export * from './request.js';
export * from './renders.service.js';
export * from './settle.js';
