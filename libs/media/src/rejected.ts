/**
 * A file the media library refuses after reading it (truncated, lying about its type, over a
 * limit). The reason is written for the uploader: it becomes the asset's error message.
 */
export class AssetRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'AssetRejected';
  }
}
