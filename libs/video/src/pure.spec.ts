import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertEdit } from '#libs/edit-spec';
import { chooseBrowser, launcherTarget, WRAPPER_FLAGS, writeBrowserWrapper } from './browser.js';
import { parseSubtitles } from './captions.js';
import { withinViewport } from './cdp.js';
import { planChunks } from './chunks.js';
import { CRF, encodingFor, GIF_FILTER, gifFfmpegOverride, REMOTION_GIF_FILTER } from './encode.js';
import { faceTraits, fontFaceRules } from './font-face.js';
import { htmlDocument, remoteUrls } from './html.js';
import { readProbe } from '#libs/media';

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

  it('declares downloaded fonts with their own weight and style', () => {
    const dejavu = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf');
    expect(faceTraits(dejavu)).toEqual({ weight: 700, italic: false });
    expect(faceTraits(Buffer.alloc(20))).toEqual({ weight: 400, italic: false });
    expect(fontFaceRules(['My "Font"'], 'http://127.0.0.1:1/t/f0.ttf', { weight: 300, italic: true }))
      .toBe('@font-face { font-family: "My \\22 Font\\22 "; src: url("http://127.0.0.1:1/t/f0.ttf"); font-weight: 300; font-style: italic; font-display: block; }');
  });

  it('runs Chromium through a wrapper that never lets it phone home, and reports a missing browser', () => {
    const dir = mkdtempSync(join(tmpdir(), 'video-wrapper-'));
    const path = writeBrowserWrapper("/opt/it's/chromium", dir);
    // The browser dies with the worker (setpriv's parent-death signal; util-linux is on every Debian).
    expect(readFileSync(path, 'utf8')).toBe(`#!/bin/sh\nexec /usr/bin/setpriv --pdeathsig KILL '/opt/it'\\''s/chromium' "$@" ${WRAPPER_FLAGS.join(' ')}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o755);
    // A launcher script that runs the browser without exec (Debian's chromium-headless-shell) is
    // skipped, so the signal reaches the browser itself.
    const binary = join(dir, 'real-browser');
    writeFileSync(binary, '#!/bin/sh\n', { mode: 0o755 });
    const launcher = join(dir, 'launcher');
    writeFileSync(launcher, `#!/bin/sh -e\n\n${binary} "$@"\n`, { mode: 0o755 });
    expect(launcherTarget(launcher)).toBe(binary);
    expect(readFileSync(writeBrowserWrapper(launcher, dir), 'utf8')).toContain(`KILL '${binary}' "$@"`);
    writeFileSync(launcher, `#!/bin/sh\nexport X=1\n${binary} "$@"\n`, { mode: 0o755 });
    expect(launcherTarget(launcher)).toBeUndefined();
    expect(WRAPPER_FLAGS).toContain('--component-updater=url-source=http://127.0.0.1:9/');
    expect(WRAPPER_FLAGS).toContain('--in-process-gpu');
    expect(chooseBrowser('/nonexistent/chromium')).toEqual({ ok: false, reason: 'BROWSER_EXECUTABLE /nonexistent/chromium is not an executable file' });
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
