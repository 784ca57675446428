import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes and removes a probe file in the data folder. */
export async function storageWritable(dataDir: string): Promise<void> {
  const dir = join(dataDir, 'files');
  await mkdir(dir, { recursive: true });
  const probe = join(dir, `.ready-${process.pid}-${Date.now()}`);
  await writeFile(probe, 'ok');
  await rm(probe);
}
