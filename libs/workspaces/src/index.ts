export * from './workspace.entity.js';
export * from './workspaces.service.js';
export * from './plans.js';
