import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, chmodSync, chownSync, constants, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { processAlive } from '#libs/core';

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
 * its own, ~80 MB less memory at the same speed (docs/benchmarks.md). The last three leave the
 * browser nothing to reach but loopback (issue 27): no host name resolves except localhost
 * (Remotion's own server is http://localhost:<port>), and every address but localhost and 127.0.0.1
 * goes to a dead proxy (the implicit bypass of link-local and other loopback addresses removed).
 * Which loopback ports a page may load from is the page's CSP (css.ts pageCsp, html.ts).
 */
export const WRAPPER_FLAGS = [
  '--component-updater=url-source=http://127.0.0.1:9/',
  '--disable-frame-rate-limit',
  '--in-process-gpu',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>;localhost;127.0.0.1',
] as const;

/** Remotion's flags the wrapper drops: its proxy settings (ours replace them) and, when the sandbox is on, the two that turn it off. */
const DROPPED_FLAGS = ['--no-proxy-server', '--proxy-server=*', '--proxy-bypass-list=*'];
const SANDBOX_OFF_FLAGS = ['--no-sandbox', '--no-zygote'];

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

/** util-linux `setpriv`, to give the browser a parent-death signal and drop root. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(executable);

/** The user a worker running as root runs Chromium as (Chromium cannot be sandboxed as root). */
export const BROWSER_USER = 'nobody';

/**
 * A `case` branch of both launchers' argument loops: the empty profile folder Remotion made for the
 * browser (`--user-data-dir`) is removed, as the wrapper gives the browser one of its own and the
 * refusing launcher starts none (Remotion removes it only after a launch that worked).
 */
const REMOVE_REMOTION_PROFILE = '    --user-data-dir=*) rmdir -- "${a#--user-data-dir=}" 2>/dev/null || true ;;';

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** uid and primary gid of `name` from /etc/passwd, or undefined. */
export function userIds(name: string, passwd = '/etc/passwd'): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync(passwd, 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // No passwd file: no such user.
  }
  return undefined;
}

/**
 * `dir`, made if missing with `mode`, after checking that it is a real folder (not a link) owned by
 * this process's user; `dir`'s parent is held to the same (a folder others may write could have
 * `dir` swapped under it). A folder of ours with a looser mode (made under umask 002: 0775) is
 * tightened: `dir` to `mode`, its parent to no write for others. Throws naming the folder when it
 * is a link, a file or another user's.
 */
export function privateFolder(dir: string, mode: number): string {
  const uid = process.getuid?.() ?? 0;
  const own = (path: string, what: string) => {
    const info = lstatSync(path);
    if (!info.isDirectory()) throw new Error(`Video engine: ${what} ${path} is not a folder (a link or a file)`);
    if (info.uid !== uid) throw new Error(`Video engine: ${what} ${path} belongs to uid ${info.uid}, not to this process (uid ${uid}); refusing to use it`);
    return info;
  };
  mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
  const parent = lstatSync(dirname(dir));
  // The system temp folder (sticky, root's): others may write in it but not replace our folder.
  if (!(parent.uid === 0 && parent.mode & 0o1000)) {
    const info = own(dirname(dir), 'the folder of');
    if (info.mode & 0o022) chmodSync(dirname(dir), info.mode & 0o7755);
  }
  try {
    mkdirSync(dir, { mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if ((own(dir, 'the browser folder').mode & 0o777) !== mode) chmodSync(dir, mode);
  return dir;
}

/**
 * This machine's name as profile folders carry it: bytes other than letters, digits, `.` and `-`
 * become `_` (the wrapper's shell does the same with `uname -n | tr`). Two worker containers may
 * share the work folder (DATA_DIR on one volume) with separate pid namespaces: a profile is judged
 * only by the host that made it.
 */
export function profileHost(name = hostname()): string {
  return Buffer.from(name).toString('latin1').replace(/[^A-Za-z0-9.-]/g, '_');
}

/** How the wrapper runs Chromium: as which user (root only: another one), and whether sandboxed. */
export interface BrowserJail {
  /** uid/gid the browser runs as when the worker is root; undefined: as the worker. */
  runAs?: { uid: number; gid: number };
  sandbox: boolean;
}

/** The longest the sandbox probe may take (a healthy one: ~0.3 s); a hung one is killed and counts as no sandbox. */
export const SANDBOX_PROBE_TIMEOUT_MS = 20_000;

const probed = new Map<string, Promise<boolean>>();

/** Whether `argv` exits 0 within `timeoutMs` (killed otherwise), without holding up the event loop. */
function exitsCleanly(argv: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<boolean> {
  return new Promise((done) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', () => {
      clearTimeout(timer);
      done(false);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      done(code === 0);
    });
  });
}

/**
 * Whether `target` starts with its sandbox on as `runAs` (Chromium's namespace sandbox needs user
 * namespaces; a container's seccomp profile often refuses them). One short headless run, once per
 * process and browser, asynchronous: stills may already be rendering (a blocked event loop would
 * miss their job lock's renewal, STILL_LOCK_MS).
 */
export function sandboxWorks(target: string, profiles: string, runAs: BrowserJail['runAs'], timeoutMs = SANDBOX_PROBE_TIMEOUT_MS): Promise<boolean> {
  const key = `${target}\0${runAs?.uid ?? ''}`;
  const known = probed.get(key);
  if (known) return known;
  const probe = (async () => {
    const profile = mkdtempSync(join(profiles, `probe-${profileHost()}-${process.pid}-`));
    try {
      if (runAs) chownSync(profile, runAs.uid, runAs.gid);
      const prefix = runAs && SETPRIV ? [SETPRIV, `--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups'] : [];
      const argv = [...prefix, target, '--headless', `--user-data-dir=${profile}`, '--dump-dom', 'about:blank'];
      return await exitsCleanly(argv, { ...process.env, HOME: profile, TMPDIR: profile }, timeoutMs);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  })();
  probed.set(key, probe);
  return probe;
}

/** Whether every folder from / down to `dir` lets other users through (a browser run as another user must reach its profile). */
function reachable(dir: string): boolean {
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      if (!(statSync(at).mode & 0o001)) return false;
    } catch {
      return false;
    }
    if (at === dirname(at)) return true;
  }
}

/**
 * Where the wrapper lives (mode 0700) and where the browser profiles go: `workDir`/browser-profiles,
 * or, when the browser runs as another user and cannot pass through `workDir`'s folders (a data
 * folder of mode 0700), a folder of the engine's own in the system temp folder, one per work folder.
 */
export function browserDirs(workDir: string): { wrapper: string; profiles: string } {
  const wrapper = join(workDir, 'browser');
  const inside = join(workDir, 'browser-profiles');
  const root = (process.getuid?.() ?? 0) === 0;
  if (!root || reachable(workDir)) return { wrapper, profiles: inside };
  const tag = createHash('sha256').update(resolve(workDir)).digest('hex').slice(0, 16);
  return { wrapper, profiles: join(tmpdir(), `video-engine-profiles-${tag}`) };
}

/**
 * A shell script that runs `browser` under `workDir`/browser (a private folder: mode 0700, owned by
 * the worker, checked before every use). Returns its path. Each start gets a fresh profile folder
 * `chromium-<host>-<pid>-XXXXXXXX` under `workDir`/browser-profiles (the host name read when the
 * browser starts, profileHost; the pid is the browser's: the script execs it), replacing Remotion's (removed while still empty), so `clearProfiles` can tell which
 * are left over. The browser runs sandboxed where the sandbox starts; a worker running as root runs
 * it as BROWSER_USER (Chromium refuses its sandbox as root). Where util-linux's setpriv exists the
 * browser is killed when the worker process dies (a worker killed mid-render must not leave
 * Chromium running: Puppeteer starts it in its own process group, out of reach of a signal to the
 * worker's group). Remotion's proxy flags are dropped for WRAPPER_FLAGS'.
 */
export async function writeBrowserWrapper(browser: string, workDir = join(tmpdir(), 'video-engine'), jail?: BrowserJail): Promise<string> {
  const dirs = browserDirs(workDir);
  const root = (process.getuid?.() ?? 0) === 0;
  const drop = root ? userIds(BROWSER_USER) : undefined;
  if (root && (!drop || !SETPRIV)) throw new Error(`Video engine: the worker runs as root and cannot run Chromium as an unprivileged user (needs util-linux setpriv and a "${BROWSER_USER}" user)`);
  const dir = privateFolder(dirs.wrapper, 0o700);
  // The profiles folder: a browser running as another user must reach (not list) its own profile in it.
  const profiles = privateFolder(dirs.profiles, drop ? 0o711 : 0o700);
  const target = launcherTarget(browser) ?? browser;
  const chosen: BrowserJail = jail ?? (drop ? { runAs: drop, sandbox: await sandboxWorks(target, profiles, drop) } : { sandbox: await sandboxWorks(target, profiles, undefined) });
  const dropped = [...DROPPED_FLAGS, ...(chosen.sandbox ? SANDBOX_OFF_FLAGS : [])];
  const setpriv = SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', ...(chosen.runAs ? [`--reuid=${chosen.runAs.uid}`, `--regid=${chosen.runAs.gid}`, '--clear-groups'] : [])].join(' ') + ' ' : '';
  const script = [
    '#!/bin/sh',
    '# Written by the video engine (libs/video/src/browser.ts writeBrowserWrapper); rewritten when it differs.',
    'set -e',
    `host=$(printf %s "$(uname -n)" | tr -c 'A-Za-z0-9.-' _)`,
    `profile=$(mktemp -d ${sh(join(profiles, 'chromium-'))}"$host-$$"-XXXXXXXX)`,
    ...(chosen.runAs ? [`chown ${chosen.runAs.uid}:${chosen.runAs.gid} "$profile"`] : []),
    'for a do',
    '  shift',
    '  case $a in',
    REMOVE_REMOTION_PROFILE,
    `    ${dropped.join('|')}) ;;`,
    '    *) set -- "$@" "$a" ;;',
    '  esac',
    'done',
    'HOME=$profile TMPDIR=$profile',
    'export HOME TMPDIR',
    `exec ${setpriv}${sh(target)} "$@" --user-data-dir="$profile" ${WRAPPER_FLAGS.map(sh).join(' ')}`,
    '',
  ].join('\n');
  return writeScript(join(dir, 'chromium-wrapper.sh'), script);
}

/**
 * A launcher that refuses to start a browser (it exits 1 at once), for Remotion's `browserExecutable`
 * beside the browser the engine passes it. Remotion starts a browser of its own only to replace ours
 * after a tab closed under a frame ("Target closed"); it keeps that one open when the call ends (we
 * passed it a browser, so it closes only tabs): a leaked Chromium per closed tab. An existing file,
 * not a missing path: Remotion checks the path through one promise chain shared by the process
 * (ensureBrowser), and a missing one would leave that chain rejected, so that no browser could be
 * opened again; a launch that fails does not touch it.
 */
export function writeRefusingLauncher(workDir = join(tmpdir(), 'video-engine')): string {
  const dir = privateFolder(browserDirs(workDir).wrapper, 0o700);
  const script = [
    '#!/bin/sh',
    '# Written by the video engine (libs/video/src/browser.ts writeRefusingLauncher): Remotion may not start a browser of its own.',
    '# The profile folder Remotion made for it is removed.',
    'for a do',
    '  case $a in',
    REMOVE_REMOTION_PROFILE,
    '  esac',
    'done',
    'echo "Video engine: Remotion may not start a browser of its own (the engine opens them)" >&2',
    'exit 1',
    '',
  ].join('\n');
  return writeScript(join(dir, 'no-second-browser.sh'), script);
}

/** Writes an executable script of ours at `path` unless it is there already, the same and ours. */
function writeScript(path: string, script: string): string {
  const current = (() => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  })();
  // Rewritten too when another user's (left in a folder that was writable by others before privateFolder tightened it).
  if (current !== script || !executable(path) || lstatSync(path).uid !== (process.getuid?.() ?? 0)) {
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, script, { mode: 0o700 });
    renameSync(temp, path);
  }
  return path;
}

/**
 * Whether live process `pid` uses the profile `path`: a browser started with it, or the wrapper
 * that just made it and is about to exec the browser (same pid). A reused pid is neither.
 */
function inUse(pid: number, path: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (args.filter((a) => a.startsWith('--user-data-dir=')).pop() === `--user-data-dir=${path}`) return true;
    return args.slice(0, 2).some((a) => a.endsWith('/chromium-wrapper.sh'));
  } catch {
    return false;
  }
}

/**
 * Removes the browser profiles of `workDir` no live process uses: a folder `chromium-<host>-<pid>-…`
 * of this host (another host's, on a shared volume, and folders named otherwise are never touched) goes
 * when process <pid> is gone or is neither a browser started with that folder nor the wrapper
 * starting one (a reused pid); a sandbox probe's folder when the worker that made it is gone. Left by a
 * worker that was killed, or by a browser that closed. Returns the folders removed. `removeEmpty`
 * (an engine closing) removes the profiles folder too when nothing is left in it.
 */
export function clearProfiles(workDir: string, opts: { removeEmpty?: boolean } = {}): string[] {
  const { profiles } = browserDirs(workDir);
  let names: string[];
  try {
    names = readdirSync(profiles);
  } catch {
    return [];
  }
  const host = profileHost();
  const removed: string[] = [];
  for (const name of names) {
    // chromium-<host>-<browser pid>-…, or probe-<host>-<worker pid>-… (sandboxWorks, killed mid-probe).
    const m = /^(?:chromium|probe)-(.+)-(\d+)-[A-Za-z0-9]+$/.exec(name);
    if (!m || m[1] !== host) continue;
    const path = join(profiles, name);
    const pid = Number(m[2]);
    if (name.startsWith('probe-') ? pid === process.pid || processAlive(pid) : inUse(pid, path)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  // A closing engine leaves no empty profiles folder behind (one per work folder in the temp folder).
  if (opts.removeEmpty && names.length === removed.length) {
    try {
      rmdirSync(profiles);
    } catch {
      // Something new in it meanwhile: it stays.
    }
  }
  return removed;
}

export type BrowserChoice = { ok: true; executable: string; wrapped: boolean } | { ok: false; reason: string };

/**
 * The browser the engine launches: `configured` (BROWSER_EXECUTABLE; used as it is, e.g. the Docker
 * image's /usr/local/bin/chromium-wrapper), else Chromium found on this machine, run through a
 * wrapper written to `wrapperDir`. Never a downloaded browser.
 */
export async function chooseBrowser(configured: string | undefined, wrapperDir?: string): Promise<BrowserChoice> {
  if (configured) {
    return executable(configured)
      ? { ok: true, executable: configured, wrapped: false }
      : { ok: false, reason: `BROWSER_EXECUTABLE ${configured} is not an executable file` };
  }
  const found = findChromium();
  if (!found) return { ok: false, reason: 'no Chromium found (install Debian\'s chromium-headless-shell or chromium package, or set BROWSER_EXECUTABLE)' };
  try {
    return { ok: true, executable: await writeBrowserWrapper(found, wrapperDir), wrapped: true };
  } catch (err) {
    return { ok: false, reason: (err as Error).message.replace(/^Video engine: /, '') };
  }
}
