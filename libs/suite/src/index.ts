export * from './a1.js';
export * from './consent.js';
export * from './contacts.js';
export * from './contacts.service.js';
export * from './drive.service.js';
export * from './google.js';
export * from './sheets.js';
export * from './sheets.service.js';
