export * from './jobs.js';
export * from './options.js';
export * from './queues.js';
export * from './queue.module.js';
export * from './still-events.js';
export * from './run-flows.js';
