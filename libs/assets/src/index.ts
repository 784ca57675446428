export * from './entities.js';
export * from './assets.service.js';
export * from './upload-fields.js';
export * from './refs.js';
export * from './stock.js';
export * from './stock-seed.js';
