import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

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

/** Runs ffmpeg or ffprobe of the compositor package; rejects with its stderr on a non-zero exit. */
export function runBinary(
  bin: 'ffmpeg' | 'ffprobe',
  args: readonly string[],
  opts: { signal?: AbortSignal; timeoutMs?: number; maxBuffer?: number } = {},
): Promise<RunResult> {
  const dir = compositorDir();
  const file = join(dir, bin);
  if (!existsSync(file)) return Promise.reject(new Error(`${file} is missing`));
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        cwd: dir,
        env: { ...process.env, LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
        maxBuffer: opts.maxBuffer ?? 16 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 0,
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (err, stdout, stderr) => {
        if (err) {
          const tail = String(stderr).trim().split('\n').slice(-3).join(' ');
          reject(Object.assign(new Error(`${bin} failed: ${tail || err.message}`), { cause: err }));
        } else resolve({ stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}
