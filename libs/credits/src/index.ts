export * from './credits.service.js';
export * from './entities.js';
