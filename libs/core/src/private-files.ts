import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

/**
 * The data folder and the files in it that hold secrets or every workspace's data (the SQLite
 * database and its WAL and SHM files, the generated app secret) are this user's alone (issue 28):
 * a folder this process creates is 0700, such a file 0600.
 */

/** Creates `dir` (and missing parents) 0700; a folder that exists keeps its mode (it may be shared: DATA_DIR=/srv/…). */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/**
 * Makes `file` 0600: created empty when missing (so that a library opening it after, SQLite, keeps
 * that mode), tightened when it exists with a looser mode and belongs to this user (left by an earlier
 * version). `create: false` only tightens an existing file.
 */
export function privateFile(file: string, opts: { create?: boolean } = {}): void {
  let mode: number;
  let uid: number;
  try {
    ({ mode, uid } = statSync(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || opts.create === false) return;
    closeSync(openSync(file, 'a', 0o600));
    return;
  }
  if ((mode & 0o077) !== 0 && uid === process.getuid?.()) chmodSync(file, 0o600);
}
