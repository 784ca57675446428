export * from './outbox-event.entity.js';
export * from './outbox.js';
export * from './render-feed.js';
