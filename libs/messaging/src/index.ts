export * from './channels.js';
export * from './entities.js';
export * from './sender.js';
export * from './whatsapp.js';
export * from './twilio.js';
export * from './email.js';
export * from './messaging.service.js';
