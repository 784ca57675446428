export * from './content-type.js';
export * from './create.js';
export * from './driver.js';
export * from './keys.js';
export * from './local-disk.js';
export * from './presign.js';
export * from './public-url.js';
export * from './s3.js';
