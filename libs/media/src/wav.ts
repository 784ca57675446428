/** The canonical 44-byte header of a mono 16-bit PCM WAV holding `dataBytes` of samples at `rate` a second. */
export function wavHeader(dataBytes: number, rate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes a second
  header.writeUInt16LE(2, 32); // bytes a sample
  header.writeUInt16LE(16, 34); // bits a sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A mono 16-bit PCM WAV of `samples` at `rate` samples a second. */
export function pcmWav(samples: Int16Array, rate: number): Buffer {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  return Buffer.concat([wavHeader(data.length, rate), data]);
}
