export * from './engine.js';
export * from './fonts.js';
export { watermarkSvg } from './watermark.js';
export { storageAwareFetcher } from '#libs/media';
export { DEFAULT_FAMILY, requestedFamily, richTextBlock, shapeSvg, textAssetBlock, titleBlock, type FontChoice } from './assets.js';
export { ellipsize } from './text.js';
export type { TextBlock } from './text.js';
