export * from './entities.js';
export * from './integrations.service.js';
