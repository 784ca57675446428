export * from './orm.js';
export { ENTITIES } from './entities.js';
export * from './prepared.js';
