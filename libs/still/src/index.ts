export * from './engine.js';
export * from './fonts.js';
export { FontFileError, parseFont } from './opentype.js';
export { watermarkSvg } from './watermark.js';
export { storageAwareFetcher } from '#libs/media';
