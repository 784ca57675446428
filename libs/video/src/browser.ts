import { accessSync, constants, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * Browsers in order of preference (PATH is searched first, then the usual folders). Debian's
 * chromium-headless-shell (the old headless mode Remotion is built for) takes screenshots from two
 * tabs at once; the full chromium serialises them (docs/benchmarks.md).
 */
const CANDIDATES = ['chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];
const FALLBACK_DIRS = ['/usr/bin', '/usr/local/bin', '/snap/bin'];

/**
 * Flags the wrapper appends: the component updater is pointed at a dead local port so the browser
 * never phones home; without the frame-rate limit a screenshot waits ~25 ms instead of ~50 ms for
 * its frame; the GPU work (software compositing) runs in the browser process instead of a process of
 * its own, ~80 MB less memory at the same speed (docs/benchmarks.md).
 */
export const WRAPPER_FLAGS = ['--component-updater=url-source=http://127.0.0.1:9/', '--disable-frame-rate-limit', '--in-process-gpu'] as const;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first Chromium or Chrome on PATH (or in the usual folders), or undefined. */
export function findChromium(env: Record<string, string | undefined> = process.env): string | undefined {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), ...FALLBACK_DIRS];
  for (const name of CANDIDATES) {
    for (const dir of dirs) {
      const path = join(dir, name);
      if (executable(path)) return path;
    }
  }
  return undefined;
}

/**
 * The binary a one-line launcher script runs (Debian's /usr/bin/chromium-headless-shell is
 * `/usr/lib/chromium/chromium-headless-shell "$@"` without exec: a parent-death signal would reach
 * the shell, not the browser), or undefined when `file` is not such a script.
 */
export function launcherTarget(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, { encoding: 'latin1' }).slice(0, 4096);
  } catch {
    return undefined;
  }
  if (!text.startsWith('#!')) return undefined;
  const lines = text.split('\n').slice(1).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const m = lines.length === 1 ? /^(?:exec\s+)?(\/[^\s'"]+)\s+"\$@"$/.exec(lines[0]!) : null;
  return m && executable(m[1]!) ? m[1] : undefined;
}

/** util-linux `setpriv`, to give the browser a parent-death signal. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(executable);

/**
 * A shell script that runs `browser` with the component-updater flag appended, written once under
 * `dir` (mode 755). Returns its path. Where util-linux's setpriv exists the browser is killed when
 * the worker process dies (a worker killed mid-render must not leave Chromium running: Puppeteer
 * starts it in its own process group, out of reach of a signal to the worker's group).
 */
export function writeBrowserWrapper(browser: string, dir = join(tmpdir(), 'video-engine')): string {
  const path = join(dir, 'chromium-wrapper.sh');
  const guard = SETPRIV ? `${SETPRIV} --pdeathsig KILL ` : '';
  const target = launcherTarget(browser) ?? browser;
  const script = `#!/bin/sh\nexec ${guard}'${target.replace(/'/g, `'\\''`)}' "$@" ${WRAPPER_FLAGS.join(' ')}\n`;
  const current = (() => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  })();
  if (current !== script || !executable(path)) {
    mkdirSync(dir, { recursive: true });
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, script, { mode: 0o755 });
    renameSync(temp, path);
  }
  return path;
}

export type BrowserChoice = { ok: true; executable: string; wrapped: boolean } | { ok: false; reason: string };

/**
 * The browser the engine launches: `configured` (BROWSER_EXECUTABLE; used as it is, e.g. the Docker
 * image's /usr/local/bin/chromium-wrapper), else Chromium found on this machine, run through a
 * wrapper written to `wrapperDir`. Never a downloaded browser.
 */
export function chooseBrowser(configured: string | undefined, wrapperDir?: string): BrowserChoice {
  if (configured) {
    return executable(configured)
      ? { ok: true, executable: configured, wrapped: false }
      : { ok: false, reason: `BROWSER_EXECUTABLE ${configured} is not an executable file` };
  }
  const found = findChromium();
  if (!found) return { ok: false, reason: 'no Chromium found (install Debian\'s chromium-headless-shell or chromium package, or set BROWSER_EXECUTABLE)' };
  return { ok: true, executable: writeBrowserWrapper(found, wrapperDir), wrapped: true };
}
