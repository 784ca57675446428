export * from './api-key.entity.js';
export * from './authenticator.js';
export * from './key-format.js';
export * from './keys.service.js';
export * from './request-meter.js';
