export * from './definition.js';
export * from './entities.js';
export * from './workflows.service.js';
export * from './runner.js';
