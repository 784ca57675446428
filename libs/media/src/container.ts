import { open, type FileHandle } from 'node:fs/promises';

/**
 * Whether a container says it holds more than the file does: the top-level boxes of an mp4, mov or
 * m4a, or the data chunk of a WAV, running past the end (a cut-off upload). Reads a few bytes per
 * box or chunk, never the media data; other formats answer false (their decoder has the last word).
 */
export async function endsEarly(file: string, size: number, ext: string): Promise<boolean> {
  const walk = ext === 'mp4' || ext === 'mov' || ext === 'm4a' ? boxesPastEnd : ext === 'wav' ? wavDataPastEnd : undefined;
  if (!walk) return false;
  const handle = await open(file);
  try {
    return await walk(handle, size);
  } finally {
    await handle.close();
  }
}

async function boxesPastEnd(handle: FileHandle, size: number): Promise<boolean> {
  const header = Buffer.alloc(16);
  let at = 0;
  for (let boxes = 0; at + 8 <= size && boxes < 10_000; boxes++) {
    const { bytesRead } = await handle.read(header, 0, 16, at);
    let length = header.readUInt32BE(0);
    if (length === 0) return false; // the last box, to the end of the file
    if (length === 1) length = bytesRead === 16 ? Number(header.readBigUInt64BE(8)) : Infinity;
    if (length < 8) return false; // not boxes: the decoder decides
    at += length;
  }
  return at > size;
}

async function wavDataPastEnd(handle: FileHandle, size: number): Promise<boolean> {
  const header = Buffer.alloc(8);
  let at = 12;
  for (let chunks = 0; at + 8 <= size && chunks < 1000; chunks++) {
    await handle.read(header, 0, 8, at);
    const length = header.readUInt32LE(4);
    // A size of 0 or 0xFFFFFFFF on the data chunk: written by a stream that could not come back to it (or RF64).
    if (header.toString('latin1', 0, 4) === 'data') return length !== 0 && length !== 0xffffffff && at + 8 + length > size;
    at += 8 + length + (length & 1);
  }
  return false;
}
