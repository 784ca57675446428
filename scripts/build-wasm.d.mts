/** scripts/build-wasm.mjs: the text of libs/video/src/bilinear-wasm.ts for bilinear.wat (or `wat`). */
export declare function bilinearModuleSource(wat?: string): Promise<string>;
