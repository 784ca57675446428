import { execFile, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { assertEdit } from '#libs/edit-spec';
import { browserDirs, chooseBrowser, clearProfiles, findChromium, launcherTarget, profileHost, sandboxWorks, WRAPPER_FLAGS, writeBrowserWrapper } from './browser.js';
import { parseSubtitles } from './captions.js';
import { withinViewport } from './cdp.js';
import { planChunks } from './chunks.js';
import { CRF, encodingFor, GIF_FILTER, gifFfmpegOverride, REMOTION_GIF_FILTER } from './encode.js';
import { cssString, cssUrl, pageCsp } from './css.js';
import { faceTraits, fontFaceRules } from './font-face.js';
import { htmlDocument, remoteUrls } from './html.js';
import { MediaFetchError, probeMedia, readProbe, runBinary } from '#libs/media';
import { assertVideoSize } from './inputs.js';

/** Work folders of the browser tests, removed afterwards with their profiles folders (in the temp folder when the work folder is 0700). */
const workFolders: string[] = [];
const workFolder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'video-wrapper-'));
  workFolders.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of workFolders) {
    rmSync(browserDirs(dir).profiles, { recursive: true, force: true });
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The video engine's pure parts: captions, encoding choices, chunk plans, probing, html, fonts, browser. */
describe('video engine helpers', () => {
  it('turns captureBeyondViewport off only for screenshots of the whole view read from the surface', () => {
    const shot = (params: Record<string, unknown>) => ({ id: 7, sessionId: 's', method: 'Page.captureScreenshot', params });
    const clip = { x: 0, y: 0, width: 1280, height: 720, scale: 1 };
    expect(withinViewport(shot({ format: 'jpeg', clip, captureBeyondViewport: true, fromSurface: true })))
      .toEqual(shot({ format: 'jpeg', clip, captureBeyondViewport: false, fromSurface: true }));
    // A clip elsewhere, a screenshot not from the surface (DISABLE_FROM_SURFACE), other methods: untouched.
    for (const m of [
      shot({ clip: { ...clip, y: 100 }, captureBeyondViewport: true }),
      shot({ clip, captureBeyondViewport: true, fromSurface: false }),
      { id: 8, method: 'Page.printToPDF', params: { captureBeyondViewport: true } },
      { id: 9, method: 'Target.activateTarget' },
    ]) expect(withinViewport(m)).toBe(m);
  });

  it('reads SRT and WebVTT cues, dropping markup, settings and notes', () => {
    const srt = '1\r\n00:00:01,500 --> 00:00:03,000\r\nHello <i>there</i>\r\nsecond line\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,250\r\nFish &amp; chips\r\n';
    expect(parseSubtitles(srt)).toEqual([
      { start: 1.5, end: 3, text: 'Hello there\nsecond line' },
      { start: 3, end: 4.25, text: 'Fish & chips' },
    ]);
    const vtt = 'WEBVTT\n\nNOTE a comment --> not a cue\n\nintro\n00:01.000 --> 00:02.500 align:start\n<v Bob>Hi</v>\n\n01:00:00.000 --> 01:00:01.000\nlate\n';
    expect(parseSubtitles(vtt)).toEqual([
      { start: 1, end: 2.5, text: 'Hi' },
      { start: 3600, end: 3601, text: 'late' },
    ]);
    expect(parseSubtitles('00:00:05,000 --> 00:00:04,000\nbackwards\n')).toEqual([]);
  });

  it('maps output quality to CRF, codec h265 on request, and gif repeat to looping', () => {
    expect(encodingFor({ format: 'mp4' })).toEqual({ codec: 'h264', crf: 23, extension: 'mp4', contentType: 'video/mp4' });
    expect(encodingFor({ format: 'mp4', quality: 'verylow' }).crf).toBe(35);
    expect(encodingFor({ format: 'mp4', codec: 'h265', quality: 'veryhigh' })).toMatchObject({ codec: 'h265', crf: CRF.h265.veryhigh });
    // Better quality never means a higher CRF.
    for (const codec of ['h264', 'h265'] as const) {
      const values = ['verylow', 'low', 'medium', 'high', 'veryhigh'].map((q) => CRF[codec][q as 'low']);
      expect([...values].sort((a, b) => b - a)).toEqual(values);
    }
    expect(encodingFor({ format: 'gif' }).gifLoops).toBeNull();
    expect(encodingFor({ format: 'gif', repeat: true }).gifLoops).toBeNull();
    expect(encodingFor({ format: 'gif', repeat: false }).gifLoops).toBe(0);
    expect(() => encodingFor({ format: 'png' })).toThrow(/mp4 and gif/);
  });

  it('plans equal chunks with a shorter last one', () => {
    expect(planChunks(25, 10)).toEqual([[0, 9], [10, 19], [20, 24]]);
    expect(planChunks(8, 10)).toEqual([[0, 7]]);
    expect(() => planChunks(100, 4)).toThrow(/at least 5/);
  });

  it('reads ffprobe output: display size after rotation, durations, cover art is not video', () => {
    const rotated = readProbe(JSON.stringify({
      streams: [{ codec_type: 'video', width: 1920, height: 1080, side_data_list: [{ rotation: -90 }] }, { codec_type: 'audio' }],
      format: { duration: '12.480000' },
    }));
    expect(rotated).toEqual({ width: 1080, height: 1920, duration: 12.48, hasVideo: true, hasAudio: true });
    const song = readProbe(JSON.stringify({ streams: [{ codec_type: 'audio' }, { codec_type: 'video', width: 600, height: 600, disposition: { attached_pic: 1 } }], format: { duration: '181.2' } }));
    expect(song).toEqual({ duration: 181.2, hasVideo: false, hasAudio: true });
  });

  it('finds the remote files of html assets and shuts everything else out of their document', () => {
    const html = '<img src="https://cdn.example.com/a.png"><a href="https://example.com/page">link</a><div style="background:url(\'https://cdn.example.com/b.jpg\')"></div>';
    const css = '@font-face { src: url(https://cdn.example.com/f.ttf) } p { color: red }';
    // Links are not loaded by a render: only what the page would fetch.
    expect(remoteUrls(html, css)).toEqual(['https://cdn.example.com/a.png', 'https://cdn.example.com/b.jpg', 'https://cdn.example.com/f.ttf']);
    const edit = assertEdit({ timeline: { tracks: [{ clips: [{ asset: { type: 'html', html, css: `${css}</style><script>x()</script>`, position: 'topLeft', background: '#80ff0000' }, start: 0, length: 1 }] }] }, output: { format: 'png' } });
    const asset = edit.timeline.tracks[0]!.clips[0]!.asset;
    if (asset.type !== 'html') throw new Error('expected html');
    const doc = htmlDocument(asset, { width: 300, height: 100 }, { origin: 'http://127.0.0.1:5555', fontFaces: '', local: new Map([['https://cdn.example.com/a.png', 'http://127.0.0.1:5555/t/f0.png']]) });
    expect(doc).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src http://127.0.0.1:5555 data:;`);
    expect(doc).toContain('<img src="http://127.0.0.1:5555/t/f0.png">');
    expect(doc).not.toContain('https://cdn.example.com/a.png');
    expect(doc).not.toContain('</style><script>');
    expect(doc).toContain('justify-content:flex-start;align-items:flex-start');
    expect(doc).toContain('background:rgba(255, 0, 0, 0.502)');
  });

  it('writes every string put in the page\'s CSS as one escaped CSS string, whatever it holds (issue 27)', () => {
    // A form feed, newline, quote, backslash or brace ends nothing: each is a hex escape.
    expect(cssString('Evil\f}body{background:url(http://127.0.0.1:1/x)}')).toBe('"Evil\\c \\7d body\\7b background:url\\28 http://127.0.0.1:1/x\\29 \\7d "');
    expect(cssString('a"b\\c\nd\re')).toBe('"a\\22 b\\5c c\\a d\\d e"');
    expect(cssString('x\0y\ud800z</style>')).toBe('"x\\fffd y\\fffd z\\3c /style\\3e "');
    expect(cssString('Open Sans')).toBe('"Open Sans"');
    expect(cssString('思源')).toBe('"\\601d \\6e90 "');
    expect(cssUrl('http://127.0.0.1:5/t/f0.ttf')).toBe('url("http://127.0.0.1:5/t/f0.ttf")');
    const rule = fontFaceRules(['X\f} @import "http://127.0.0.1:1/a.css"; a{'], 'http://127.0.0.1:1/t/f0.ttf', { weight: 400, italic: false });
    expect(rule.match(/\{/g)).toHaveLength(1);
    expect(rule).not.toMatch(/\f|"http:\/\/127.0.0.1:1\/a.css"/);
    // The page's policy: its own server and the media server's origin, nothing else; a malformed origin is left out.
    expect(pageCsp('http://127.0.0.1:4321')).toContain("img-src 'self' http://127.0.0.1:4321 data: blob:");
    expect(pageCsp('http://127.0.0.1:4321')).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline';/);
    expect(pageCsp('http://127.0.0.1:1 https://evil.example')).not.toContain('evil');
  });

  it('declares downloaded fonts with their own weight and style', () => {
    const dejavu = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf');
    expect(faceTraits(dejavu)).toEqual({ weight: 700, italic: false });
    expect(faceTraits(Buffer.alloc(20))).toEqual({ weight: 400, italic: false });
    expect(fontFaceRules(['My "Font"'], 'http://127.0.0.1:1/t/f0.ttf', { weight: 300, italic: true }))
      .toBe('@font-face { font-family: "My \\22 Font\\22 "; src: url("http://127.0.0.1:1/t/f0.ttf"); font-weight: 300; font-style: italic; font-display: block; }');
  });

  it('runs Chromium through a wrapper that never lets it phone home or reach anything but loopback, and reports a missing browser (issue 27)', async () => {
    const work = workFolder();
    const path = await writeBrowserWrapper("/opt/it's/chromium", work, { runAs: { uid: 65534, gid: 65534 }, sandbox: true });
    expect(path).toBe(join(work, 'browser', 'chromium-wrapper.sh'));
    const script = readFileSync(path, 'utf8');
    // The browser dies with the worker (setpriv's parent-death signal; util-linux is on every
    // Debian) and runs as an unprivileged user, sandboxed, in a fresh profile of the engine's own.
    expect(script).toContain(`exec /usr/bin/setpriv --pdeathsig KILL --reuid=65534 --regid=65534 --clear-groups '/opt/it'\\''s/chromium' "$@" --user-data-dir="$profile" ${WRAPPER_FLAGS.map((f) => `'${f}'`).join(' ')}\n`);
    expect(script).toContain(`profile=$(mktemp -d '${join(browserDirs(work).profiles, 'chromium-')}'"$host-$$"-XXXXXXXX)`);
    expect(script).toContain('chown 65534:65534 "$profile"');
    expect(script).toContain('--no-proxy-server|--proxy-server=*|--proxy-bypass-list=*|--no-sandbox|--no-zygote) ;;');
    expect(WRAPPER_FLAGS).toContain('--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1');
    expect(WRAPPER_FLAGS).toContain('--proxy-server=http://127.0.0.1:9');
    expect(statSync(path).mode & 0o777).toBe(0o700);
    expect(statSync(join(work, 'browser')).mode & 0o777).toBe(0o700);
    // Without its sandbox the browser keeps Remotion's --no-sandbox.
    expect(readFileSync(await writeBrowserWrapper("/opt/it's/chromium", work, { sandbox: false }), 'utf8')).toContain('--proxy-bypass-list=*) ;;');
    // A launcher script that runs the browser without exec (Debian's chromium-headless-shell) is
    // skipped, so the signal reaches the browser itself.
    const binary = join(work, 'real-browser');
    writeFileSync(binary, '#!/bin/sh\n', { mode: 0o755 });
    const launcher = join(work, 'launcher');
    writeFileSync(launcher, `#!/bin/sh -e\n\n${binary} "$@"\n`, { mode: 0o755 });
    expect(launcherTarget(launcher)).toBe(binary);
    expect(readFileSync(await writeBrowserWrapper(launcher, work, { sandbox: false }), 'utf8')).toContain(`KILL '${binary}' "$@"`);
    writeFileSync(launcher, `#!/bin/sh\nexport X=1\n${binary} "$@"\n`, { mode: 0o755 });
    expect(launcherTarget(launcher)).toBeUndefined();
    expect(WRAPPER_FLAGS).toContain('--component-updater=url-source=http://127.0.0.1:9/');
    expect(WRAPPER_FLAGS).toContain('--in-process-gpu');
    expect(await chooseBrowser('/nonexistent/chromium')).toEqual({ ok: false, reason: 'BROWSER_EXECUTABLE /nonexistent/chromium is not an executable file' });
  });

  it('the wrapper\'s browser reaches 127.0.0.1 and nothing else: not 127.0.0.2, not a host name (issue 27)', async () => {
    const chromium = findChromium();
    if (!chromium) throw new Error('no Chromium on this machine');
    const work = workFolder();
    const wrapper = await writeBrowserWrapper(chromium, work);
    const seen: string[] = [];
    const listen = async (host: string) => {
      const server = createServer((req, res) => {
        seen.push(`${host} ${req.url}`);
        res.writeHead(200, { 'content-type': 'text/html' }).end('<p>served</p>');
      });
      await new Promise<void>((r) => server.listen(0, host, r));
      return { server, port: (server.address() as AddressInfo).port };
    };
    const one = await listen('127.0.0.1');
    const two = await listen('127.0.0.2');
    try {
      const dump = (url: string) => promisify(execFile)('/bin/sh', [wrapper, '--headless', '--no-sandbox', '--no-proxy-server', '--proxy-bypass-list=*', '--dump-dom', url], { timeout: 30_000 }).then((r) => r.stdout, () => '');
      expect(await dump(`http://127.0.0.1:${one.port}/a`)).toContain('served');
      // Remotion's proxy flags are dropped: the dead proxy takes every other address.
      expect(await dump(`http://127.0.0.2:${two.port}/b`)).not.toContain('served');
      // This machine's own name resolves to loopback (/etc/hosts): the resolver rules refuse it anyway.
      expect(await dump(`http://${hostname()}:${one.port}/c`)).not.toContain('served');
      expect(seen).toEqual([`127.0.0.1 /a`]);
    } finally {
      one.server.close();
      two.server.close();
      clearProfiles(work);
    }
  }, 60_000);

  it('refuses a wrapper folder another user owns or that is a link, and tightens one of its own others may write (issue 27)', async () => {
    const work = workFolder();
    const jail = { sandbox: false };
    // Owned by someone else (the folder is made first by "another user").
    mkdirSync(join(work, 'browser'), { mode: 0o700 });
    chownSync(join(work, 'browser'), 65534, 65534);
    await expect(writeBrowserWrapper('/usr/bin/true', work, jail)).rejects.toThrow(/browser folder .*\/browser belongs to uid 65534, not to this process/);
    rmSync(join(work, 'browser'), { recursive: true });
    // A link to a folder elsewhere.
    const elsewhere = workFolder();
    symlinkSync(elsewhere, join(work, 'browser'));
    await expect(writeBrowserWrapper('/usr/bin/true', work, jail)).rejects.toThrow(/is not a folder \(a link or a file\)/);
    unlinkSync(join(work, 'browser'));
    // A work folder of another user (the wrapper folder could be swapped under it).
    chownSync(work, 65534, 65534);
    await expect(writeBrowserWrapper('/usr/bin/true', work, jail)).rejects.toThrow(/the folder of .* belongs to uid 65534/);
    chownSync(work, process.getuid!(), process.getgid!());
    // Folders of this user left writable by others are tightened, the work folder to no write for
    // others, the wrapper's to 0700; a wrapper file of another user in it is replaced.
    chmodSync(work, 0o777);
    mkdirSync(join(work, 'browser'), { mode: 0o700 });
    chmodSync(join(work, 'browser'), 0o777);
    writeFileSync(join(work, 'browser', 'chromium-wrapper.sh'), readFileSync(await writeBrowserWrapper('/usr/bin/true', workFolder(), jail)), { mode: 0o700 });
    chownSync(join(work, 'browser', 'chromium-wrapper.sh'), 65534, 65534);
    await writeBrowserWrapper('/usr/bin/true', work, jail);
    expect(statSync(work).mode & 0o777).toBe(0o755);
    expect(statSync(join(work, 'browser')).mode & 0o777).toBe(0o700);
    expect(statSync(join(work, 'browser', 'chromium-wrapper.sh')).uid).toBe(process.getuid!());
    expect(await chooseBrowser(undefined, join(work, 'browser', 'chromium-wrapper.sh'))).toMatchObject({ ok: false });
  });

  it('starts under umask 002: the work folder is made 0700, or tightened when this user made it 0775 (issue 27)', async () => {
    const previous = process.umask(0o002);
    try {
      // Made by the wrapper (as by VideoEngine.start: mode 0700), nested in a fresh data folder.
      const fresh = join(workFolder(), 'data', 'video-work');
      expect(readFileSync(await writeBrowserWrapper('/usr/bin/true', fresh, { sandbox: false }), 'utf8')).toContain('/usr/bin/true');
      expect(statSync(fresh).mode & 0o777).toBe(0o700);
      // Left by an earlier version with the default mode (0775 under this umask).
      const loose = join(workFolder(), 'video-work');
      mkdirSync(loose);
      expect(statSync(loose).mode & 0o777).toBe(0o775);
      await writeBrowserWrapper('/usr/bin/true', loose, { sandbox: false });
      expect(statSync(loose).mode & 0o777).toBe(0o755);
      expect(statSync(join(loose, 'browser')).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });

  it('probes the sandbox without holding up the event loop (stills render meanwhile), kills a hung probe, and asks once per process (issue 27)', async () => {
    const work = workFolder();
    const profiles = join(work, 'profiles');
    mkdirSync(profiles, { mode: 0o700 });
    const slow = join(work, 'slow-browser');
    writeFileSync(slow, '#!/bin/sh\nsleep 1\n', { mode: 0o755 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    try {
      expect(await sandboxWorks(slow, profiles, undefined)).toBe(true);
      // A blocking probe (spawnSync) let no timer run for its whole second.
      expect(ticks).toBeGreaterThanOrEqual(10);
      // A hung probe is killed after its time-out and counts as no sandbox.
      const hung = join(work, 'hung-browser');
      writeFileSync(hung, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
      const started = Date.now();
      expect(await sandboxWorks(hung, profiles, undefined, 300)).toBe(false);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      clearInterval(ticker);
    }
    // The answer is kept: the same browser is not run again (gone now, it would fail).
    rmSync(slow);
    expect(await sandboxWorks(slow, profiles, undefined)).toBe(true);
    expect(readdirSync(profiles)).toEqual([]);
  });

  it('clears browser profiles no live browser uses, and keeps the ones in use (issue 27)', async () => {
    const work = workFolder();
    await writeBrowserWrapper('/usr/bin/true', work, { sandbox: false });
    const { profiles } = browserDirs(work);
    const host = profileHost();
    // The wrapper names a profile after the host as profileHost does (a stand-in browser prints its arguments).
    const echoing = workFolder();
    expect(execFileSync('/bin/sh', [await writeBrowserWrapper('/bin/echo', echoing, { sandbox: false })], { encoding: 'utf8' })).toMatch(new RegExp(`--user-data-dir=\\S+/chromium-${host.replace(/\./g, '\\.')}-\\d+-\\w{8} `));
    expect(clearProfiles(echoing, { removeEmpty: true })).toHaveLength(1);
    expect(profileHost('a b/ü.x-1')).toBe('a_b___.x-1');
    // A profile of a process that is gone (pid 2^22 + 1 is above Linux's pid_max), one whose pid
    // is alive but is not a browser with that folder (this test process), and one in use.
    const gone = join(profiles, `chromium-${host}-4194305-AAAAAAAA`);
    const reused = join(profiles, `chromium-${host}-${process.pid}-BBBBBBBB`);
    mkdirSync(join(gone, 'Default'), { recursive: true });
    writeFileSync(join(gone, 'Default', 'Preferences'), 'x'.repeat(1000));
    mkdirSync(reused);
    // Another worker container's (a work folder on a shared volume, its own pid namespace: pid
    // 4194305 and this test's pid mean nothing here), and a folder named without a host: never touched.
    const otherHost = [join(profiles, 'chromium-other-box-4194305-EEEEEEEE'), join(profiles, `chromium-not${host}-${process.pid}-FFFFFFFF`), join(profiles, 'probe-other-box-4194305-abcdef')];
    const unnamed = join(profiles, 'chromium-4194305-GGGGGGGG');
    for (const dir of [...otherHost, unnamed]) mkdirSync(dir);
    // A process started with its folder named after its pid, as the wrapper starts the browser.
    let starting: ReturnType<typeof spawn> | undefined;
    const child = spawn('/bin/sh', ['-c', 'p="$0/chromium-$2-$$-CCCCCCCC"; mkdir "$p"; exec "$1" -e "setTimeout(() => {}, 30000)" -- --user-data-dir="$p"', profiles, process.execPath, host], { stdio: 'ignore' });
    const inUse = join(profiles, `chromium-${host}-${child.pid}-CCCCCCCC`);
    try {
      const until = Date.now() + 5000;
      while (!readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').startsWith(process.execPath) && Date.now() < until) execFileSync('sleep', ['0.05']);
      // A sandbox probe's folder of a worker that is gone; a profile the wrapper has just made (its
      // shell still runs, about to exec the browser under the same pid).
      const probe = join(profiles, `probe-${host}-4194305-abcdef`);
      mkdirSync(probe);
      const script = join(work, 'chromium-wrapper.sh');
      writeFileSync(script, 'sleep 30\n');
      starting = spawn('/bin/sh', [script], { stdio: 'ignore' });
      const made = join(profiles, `chromium-${host}-${starting.pid!}-DDDDDDDD`);
      mkdirSync(made);
      try {
        expect(clearProfiles(work).sort()).toEqual([gone, probe, reused].sort());
        expect(existsSync(made)).toBe(true);
      } finally {
        starting.kill('SIGKILL');
        execFileSync('sleep', ['0.2']);
      }
      expect(existsSync(gone)).toBe(false);
      expect(existsSync(reused)).toBe(false);
      expect(existsSync(inUse)).toBe(true);
      expect(existsSync(otherHost[0]!) && existsSync(otherHost[1]!) && existsSync(unnamed)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
    // Once its browser is gone, the folder goes too.
    const until = Date.now() + 5000;
    while (existsSync(`/proc/${child.pid}/cmdline`) && readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').startsWith(process.execPath) && Date.now() < until) execFileSync('sleep', ['0.05']);
    expect(clearProfiles(work).sort()).toEqual([inUse, join(profiles, `chromium-${host}-${starting!.pid!}-DDDDDDDD`)].sort());
  });
});

describe('the gif palette filter (docs/benchmarks.md "GIF palette and dithering")', () => {
  it('replaces Remotion\'s default palette filter in its ffmpeg command and leaves everything else', () => {
    const args = ['-r', '12', '-f', 'image2', '-i', 'element-%04d.png', '-filter_complex', REMOTION_GIF_FILTER, '-an', '-loop', '0', '-y', 'out.gif'];
    const out = gifFfmpegOverride({ type: 'stitcher', args });
    expect(out).toEqual(args.map((a) => (a === REMOTION_GIF_FILTER ? GIF_FILTER : a)));
    expect(out.join(' ')).toContain('paletteuse=dither=floyd_steinberg');
    expect(out.join(' ')).toContain('reserve_transparent=0');
    expect(gifFfmpegOverride({ type: 'stitcher', args: ['-i', 'x.png', 'y.mp4'] })).toEqual(['-i', 'x.png', 'y.mp4']);
  });
});

describe('assertVideoSize (issue 27: a video decoded at a bounded size)', () => {
  it('lets an 8K UHD video through and refuses 16384×16384, naming the src and the size', () => {
    expect(() => assertVideoSize('https://media.test/8k.mp4', { width: 7680, height: 4320 })).not.toThrow();
    expect(() => assertVideoSize('https://media.test/a.mp3', {})).not.toThrow();
    expect(() => assertVideoSize('https://media.test/huge.webm', { width: 16384, height: 16384 })).toThrow(
      new MediaFetchError('https://media.test/huge.webm', 'The video https://media.test/huge.webm is 16384×16384 (268.4 megapixels); at most 40 megapixels a frame are decoded (house limit, docs/decisions.md)'),
    );
  });

  it('refuses a real 8000×6000 file from its ffprobe size, before anything decodes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'video-size-'));
    try {
      const file = join(dir, 'big.mp4');
      const picture = join(dir, 'black.png');
      await sharp({ create: { width: 8000, height: 6000, channels: 3, background: '#000000' } }).png().toFile(picture);
      await runBinary('ffmpeg', ['-v', 'error', '-y', '-i', picture, '-frames:v', '1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file], { timeoutMs: 60_000 });
      const probed = await probeMedia(file);
      expect([probed.width, probed.height]).toEqual([8000, 6000]);
      expect(() => assertVideoSize('https://media.test/big.mp4', probed)).toThrow(/^The video https:\/\/media.test\/big.mp4 is 8000×6000 \(48 megapixels\); at most 40 megapixels/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
