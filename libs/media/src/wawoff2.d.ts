// wawoff2 (Google's WOFF2 code compiled to WebAssembly) ships no types.
declare module 'wawoff2/decompress.js' {
  /** The sfnt (TTF/OTF) a WOFF2 file packs; rejects when the file cannot be decoded. */
  export default function decompress(woff2: Uint8Array): Promise<Uint8Array>;
}
declare module 'wawoff2/compress.js' {
  export default function compress(sfnt: Uint8Array): Promise<Uint8Array>;
}
