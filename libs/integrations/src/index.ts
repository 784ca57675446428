export * from './entities.js';
export * from './integrations.service.js';
export * from './provider-call.js';
export * from './offline.js';
