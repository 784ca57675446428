import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Scratch folders of worker processes. Each process keeps its work files under
 * `<base>/<host>-<pid>-<token>/` (the token drawn once per process), so that a sweeper can prove whose
 * a folder is: several workers on one machine share the temporary folder (and DATA_DIR), and a killed
 * one leaves its folders behind. decisions.md "Hostile input (issue 27): outbound".
 */
const OWNER = /^(.+)-(\d+)-([0-9a-f]{8})$/;
const TOKEN = randomBytes(4).toString('hex');

/** This process's folder under `base` (the caller makes it: `makeOwnScratch`). */
export function ownScratch(base: string): string {
  return join(base, `${hostname()}-${process.pid}-${TOKEN}`);
}

/**
 * Makes `<base>/<host>-<pid>-<token>/` (mode 0700) and answers it, once it is sure the folder is its
 * own: a real folder (not a link another user left there) owned by this process's user.
 */
export async function makeOwnScratch(base: string): Promise<string> {
  const dir = ownScratch(base);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (!info.isDirectory() || (process.getuid && info.uid !== process.getuid())) {
    throw new Error(`${dir} is not a folder of this process's user; refusing to work in it`);
  }
  return dir;
}

/** True while a process of this machine runs with `pid` (one of another user counts: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the scratch folders under `base` of processes of this host that are gone: a pid no process
 * has, or this process's pid with another token (a dead predecessor: a restarted container's worker
 * often has the same small pid). Folders of another host (a shared volume), of live processes and
 * this process's own are kept; so is anything not named `<host>-<pid>-<token>`. Answers the folders
 * removed.
 */
export async function sweepScratch(base: string, alive: (pid: number) => boolean = processAlive): Promise<string[]> {
  const host = hostname();
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = OWNER.exec(name);
    if (!m || m[1] !== host) continue;
    const pid = Number(m[2]);
    if (pid === process.pid ? m[3] === TOKEN : alive(pid)) continue;
    await rm(join(base, name), { recursive: true, force: true });
    removed.push(join(base, name));
  }
  return removed;
}
