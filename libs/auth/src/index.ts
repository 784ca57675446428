export * from './auth.service.js';
export * from './entities.js';
export * from './jwt.js';
export * from './phone.js';
export * from './roles.js';
export * from './sms.js';
export * from './background.js';
