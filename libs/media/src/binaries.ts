import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * The ffmpeg and ffprobe that ship with Remotion's compositor package (no system ffmpeg needed).
 * The binaries find their shared libraries in their own folder, which is the working directory
 * Remotion itself runs them from.
 */
export function compositorDir(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@remotion/compositor-${process.platform}-${process.arch}${process.platform === 'linux' ? '-gnu' : ''}`;
  try {
    return dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`${pkg} is not installed (it comes with @remotion/renderer on this platform)`);
  }
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Where a compositor binary is and how it runs (its shared libraries beside it). */
function binaryCommand(bin: 'ffmpeg' | 'ffprobe'): { file: string; cwd: string; env: NodeJS.ProcessEnv } {
  const dir = compositorDir();
  const file = join(dir, bin);
  if (!existsSync(file)) throw new Error(`${file} is missing`);
  return { file, cwd: dir, env: { ...process.env, LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } };
}

const failure = (bin: string, stderr: string, cause: unknown, fallback: string) => {
  const tail = stderr.trim().split('\n').slice(-3).join(' ');
  return Object.assign(new Error(`${bin} failed: ${tail || fallback}`), { cause });
};

/** Runs ffmpeg or ffprobe of the compositor package; rejects with its stderr on a non-zero exit. */
export function runBinary(
  bin: 'ffmpeg' | 'ffprobe',
  args: readonly string[],
  opts: { signal?: AbortSignal; timeoutMs?: number; maxBuffer?: number } = {},
): Promise<RunResult> {
  let command: ReturnType<typeof binaryCommand>;
  try {
    command = binaryCommand(bin);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  return new Promise((resolve, reject) => {
    execFile(
      command.file,
      args,
      {
        cwd: command.cwd,
        env: command.env,
        maxBuffer: opts.maxBuffer ?? 16 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 0,
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (err, stdout, stderr) => {
        if (err) reject(failure(bin, String(stderr), err, err.message));
        else resolve({ stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/**
 * Runs ffmpeg or ffprobe with its output handed to `onStdout` chunk by chunk (nothing is buffered
 * whole). The child is killed (SIGKILL) on abort, after `timeoutMs`, or when `onStdout` throws; a
 * non-zero exit rejects with its stderr, the exit code as `cause.code`, like runBinary.
 */
export function streamBinary(
  bin: 'ffmpeg' | 'ffprobe',
  args: readonly string[],
  onStdout: (chunk: Buffer) => void,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child, stderr } = spawnBinary(bin, args, 'stdout', opts);
    let failed: Error | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        onStdout(chunk);
      } catch (err) {
        failed = err as Error;
        child.kill('SIGKILL');
      }
    });
    child.on('error', (err) => {
      failed ??= err;
      if (child.pid === undefined) reject(err); // it never started: no 'close' to wait for
    });
    child.on('close', (code, signal) => {
      if (failed) reject(failed);
      else if (code === 0) resolve();
      else reject(failure(bin, stderr(), { code, signal }, signal ? `killed by ${signal}` : `exit code ${code}`));
    });
  });
}

type BinaryOptions = { signal?: AbortSignal; timeoutMs?: number };

/**
 * ffmpeg or ffprobe spawned as streamBinary and feedBinary run it: its output (or its input) a pipe,
 * killed (SIGKILL) on abort or after `timeoutMs`, the last 4 KB of its stderr kept for the failure.
 */
function spawnBinary(bin: 'ffmpeg' | 'ffprobe', args: readonly string[], pipe: 'stdout', opts: BinaryOptions): { child: ChildProcessByStdio<null, Readable, Readable>; stderr: () => string };
function spawnBinary(bin: 'ffmpeg' | 'ffprobe', args: readonly string[], pipe: 'stdin', opts: BinaryOptions): { child: ChildProcessByStdio<Writable, null, Readable>; stderr: () => string };
function spawnBinary(bin: 'ffmpeg' | 'ffprobe', args: readonly string[], pipe: 'stdin' | 'stdout', opts: BinaryOptions): { child: ChildProcessByStdio<Writable | null, Readable | null, Readable>; stderr: () => string } {
  const { file, cwd, env } = binaryCommand(bin);
  const child = spawn(file, args, {
    cwd,
    env,
    stdio: pipe === 'stdin' ? ['pipe', 'ignore', 'pipe'] : ['ignore', 'pipe', 'pipe'],
    killSignal: 'SIGKILL',
    ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  }) as ChildProcessByStdio<Writable | null, Readable | null, Readable>;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4096);
  });
  return { child, stderr: () => stderr };
}

/**
 * Runs ffmpeg or ffprobe and yields its output as it comes, with back-pressure: the child waits while
 * the reader does (streamBinary pushes instead). Killed (SIGKILL) on abort, after `timeoutMs`, or
 * when the reader stops early; a non-zero exit throws with its stderr, like runBinary.
 */
export async function* readBinary(bin: 'ffmpeg' | 'ffprobe', args: readonly string[], opts: BinaryOptions = {}): AsyncGenerator<Buffer> {
  const { child, stderr } = spawnBinary(bin, args, 'stdout', opts);
  let failed: Error | undefined;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (err) => {
      failed ??= err;
      if (child.pid === undefined) resolve({ code: null, signal: null }); // it never started: no 'close' to wait for
    });
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) yield chunk;
    const { code, signal } = await closed;
    if (failed) throw failed;
    if (code !== 0) throw failure(bin, stderr(), { code, signal }, signal ? `killed by ${signal}` : `exit code ${code}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** streamBinary's output collected, refused past `maxBytes`. */
export async function runBinaryToBuffer(
  bin: 'ffmpeg' | 'ffprobe',
  args: readonly string[],
  opts: { signal?: AbortSignal; timeoutMs?: number; maxBytes: number },
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  await streamBinary(bin, args, (chunk) => {
    size += chunk.length;
    if (size > opts.maxBytes) throw new Error(`${bin} wrote more than ${opts.maxBytes} bytes`);
    chunks.push(chunk);
  }, opts);
  return Buffer.concat(chunks);
}

/** ffmpeg fed through its standard input (feedBinary): write in order, then end and wait for its exit. */
export interface BinaryFeed {
  /** Resolves when the pipe takes more (back-pressure); rejects once the child has failed. */
  write(chunk: Buffer): Promise<void>;
  /** As write, and resolves only once the pipe has every byte of `chunk`: the caller may then change it. */
  lend(chunk: Buffer): Promise<void>;
  /** Closes the input and resolves on a zero exit; rejects with its stderr like runBinary. */
  end(): Promise<void>;
  /** Kills the child (SIGKILL); `end` then rejects. */
  kill(): void;
}

/**
 * Runs ffmpeg or ffprobe with its standard input fed by the caller (e.g. pictures to encode as they
 * are drawn). The child is killed (SIGKILL) on abort or after `timeoutMs`.
 */
export function feedBinary(bin: 'ffmpeg' | 'ffprobe', args: readonly string[], opts: { signal?: AbortSignal; timeoutMs?: number } = {}): BinaryFeed {
  const { child, stderr } = spawnBinary(bin, args, 'stdin', opts);
  let failed: Error | undefined;
  // A child that exits early closes its input: the write's error is the exit's, reported by `end`.
  child.stdin.on('error', (err) => {
    failed ??= err;
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', (err) => {
      failed ??= err;
      if (child.pid === undefined) reject(err);
    });
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(failure(bin, stderr(), { code, signal, failed }, signal ? `killed by ${signal}` : `exit code ${code}`));
    });
  });
  exited.catch(() => undefined);
  /** The child failed or exited: a write's answer is its exit. */
  const over = () => failed !== undefined || child.exitCode !== null || child.signalCode !== null;
  return {
    write: async (chunk) => {
      if (over()) return exited;
      if (!child.stdin.write(chunk)) {
        // Until the pipe drains or the child exits; the other's listener does not outlive the wait.
        let drained: (() => void) | undefined;
        try {
          await Promise.race([new Promise<void>((resolve) => child.stdin.once('drain', (drained = resolve))), exited]);
        } finally {
          if (drained) child.stdin.off('drain', drained);
        }
      }
    },
    lend: async (chunk) => {
      if (over()) return exited;
      // A failed write is the child's failure (its exit, with its stderr), reported by this call.
      await Promise.race([new Promise<void>((resolve) => child.stdin.write(chunk, (err) => resolve(err ? exited : undefined))), exited]);
    },
    end: () => {
      child.stdin.end();
      return exited;
    },
    kill: () => {
      child.kill('SIGKILL');
    },
  };
}
