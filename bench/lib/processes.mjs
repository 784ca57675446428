// What a bench run owns and must give back: child processes (output kept for error messages), temp
// dirs and other clean-up steps, stopped and removed on exit, on error and on a signal (exit 130).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const children = new Set();
const tempDirs = [];
const cleanups = [];
let cleaning = null;
let signalled = null;

export function log(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** A temp dir `<tmpdir>/<prefix>-XXXXXX`, removed by cleanup (and on any exit). */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  tempDirs.push(dir);
  return dir;
}

/** A step run by cleanup after the children have stopped (last registered, first run). */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/**
 * Spawns a child (cwd: the repository) whose output is kept (last 16 KB) for error messages. It leads
 * a process group of its own, so a Ctrl-C reaches the bench alone, which stops the children in order
 * with SIGTERM (a worker then closes its browser and removes its profile), and whatever a child
 * leaves behind in its group is killed with it. `last`: stopped after every other child (the servers
 * the others talk to: Redis).
 */
export function startChild(name, cmd, args, env = process.env, { ipc = false, last = false } = {}) {
  const child = spawn(cmd, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])] });
  child.label = name;
  child.last = last;
  child.output = '';
  const keep = (chunk) => {
    child.output = (child.output + chunk.toString()).slice(-16_384);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  child.on('error', (err) => keep(`\n${err.message}\n`));
  children.add(child);
  void child.exited.then(() => children.delete(child));
  return child;
}

/** SIGKILL to a child's process group: the child and what it started (a worker's Chromium, ffmpeg). */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch { /* none left */ }
}

/** `signal` to the child, SIGKILL to its group after `timeoutMs`; what its group still holds after it exited is killed. */
export async function stopChild(child, { timeoutMs = 5000, signal = 'SIGTERM' } = {}) {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill(signal);
    const timer = setTimeout(() => killGroup(child), timeoutMs);
    await child.exited;
    clearTimeout(timer);
  }
  killGroup(child);
}

/** Resolves when `probe()` is true; fails when `child` exits first or after `timeoutMs`. */
export async function waitFor(what, child, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`${what}: ${child.label} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${child.output}`);
    }
    try {
      if (await probe()) return;
    } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs / 1000} s\n${child?.output ?? ''}`);
    await sleep(100);
  }
}

/** Runs `node <args>` to its end; resolves with its output, rejects on a non-zero exit. */
export function runNode(args, env) {
  return new Promise((res, rej) => {
    const child = startChild(args[0], process.execPath, args, env);
    void child.exited.then(({ code }) => (code === 0 ? res(child.output) : rej(new Error(`${args.join(' ')} exited ${code}:\n${child.output}`))));
  });
}

/** The kept output of every child still running (for failure reports). */
export function childOutputs() {
  return [...children].map((c) => `--- ${c.label} ---\n${c.output}`).join('\n');
}

/**
 * Stops the children (the `last` ones after the others), runs the clean-up steps, removes the temp
 * dirs. Everything it gave back is forgotten, so a run may start another stack afterwards.
 */
export function cleanup() {
  cleaning ??= (async () => {
    const all = [...children];
    await Promise.all(all.filter((c) => !c.last).map((c) => stopChild(c)));
    await Promise.all(all.filter((c) => c.last).map((c) => stopChild(c)));
    for (const fn of cleanups.splice(0).reverse()) {
      const timeout = new Promise((_, rej) => setTimeout(() => rej(new Error('a step took over 15 s')), 15_000).unref());
      await Promise.race([Promise.resolve().then(fn), timeout]).catch((err) => log(`cleanup: ${err.message}`));
    }
    for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  })().finally(() => {
    cleaning = null;
  });
  return cleaning;
}

/** The signal being handled, or null: a run that fails because of it is not reported as a failure. */
export function interrupted() {
  return signalled;
}

/**
 * On SIGINT, SIGTERM or SIGHUP: cleanup, then exit 130. Signals during the cleanup are ignored (npm
 * passes the terminal's Ctrl-C on, `timeout -s INT` signals the bench twice); the cleanup is bounded
 * (SIGKILL after 5 s, 15 s a step). On any exit: SIGKILL to the process groups of the children left,
 * temp dirs removed.
 */
export function installCleanupHandlers() {
  process.on('exit', () => {
    for (const c of children) killGroup(c);
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      if (signalled) return;
      signalled = sig;
      log(`${sig}: stopping`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}
