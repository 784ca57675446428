export * from './engine.js';
export { chooseBrowser, findChromium, writeBrowserWrapper, WRAPPER_FLAGS, type BrowserChoice } from './browser.js';
export { ensureBundle, bundleKey, isBundle } from './bundle.js';
export { CRF, DEFAULT_QUALITY, encodingFor, type Encoding } from './encode.js';
export { storageAwareTextFetcher, type TextFetcher } from './fetch-text.js';
export { parseSubtitles } from './captions.js';
export { compositorDir, probeMedia, readProbe, runBinary, type ProbedMedia } from '#libs/media';
export { planChunks } from './chunks.js';
export type { EditProps, Cue } from './props.js';
