/**
 * Splits the frames of an output into chunks of `framesPerChunk` (the last one shorter) for parallel
 * rendering: `renderChunk` each range, then `combine`. Every chunk but the last must be the same
 * length (the gapless audio join relies on it).
 */
export function planChunks(totalFrames: number, framesPerChunk: number): [number, number][] {
  if (!Number.isInteger(totalFrames) || totalFrames < 1) throw new Error(`totalFrames must be a positive integer, got ${totalFrames}`);
  if (!Number.isInteger(framesPerChunk) || framesPerChunk < 5) throw new Error(`framesPerChunk must be an integer of at least 5, got ${framesPerChunk}`);
  const ranges: [number, number][] = [];
  for (let from = 0; from < totalFrames; from += framesPerChunk) ranges.push([from, Math.min(totalFrames, from + framesPerChunk) - 1]);
  return ranges;
}
