#!/usr/bin/env node
/**
 * Makes the project's own files of the stock (`global`) asset library into libs/assets/stock/files:
 * backgrounds and textures (drawn as SVG, rasterised with sharp), shapes and icons (SVG), short
 * video loops and audio stingers (frames and samples computed here, encoded with Debian's ffmpeg),
 * Lottie animations (bodymovin JSON written here), one WOFF and one WOFF2 repacking of Debian's
 * Roboto, and copies of the template library's pictures. Everything drawn or computed here is CC0;
 * the catalog is libs/assets/src/stock.ts, from which LICENCES.md is written here too. The output is
 * committed; run again after changing a drawing or the catalog:
 *
 *   node libs/assets/stock/make-stock.mjs      (needs `apt-get install ffmpeg fonts-roboto-unhinted`)
 *
 * Deterministic: seeded pseudo-random numbers, single-threaded encoders and ffmpeg's bitexact
 * flags (no version or date in the files), so a re-run without changes rewrites the same bytes.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import compressWoff2 from 'wawoff2/compress.js';
// Node 24 strips the types of the shared generator (mulberry32: the same dots every run).
import { seeded as random } from '../../core/src/random.ts';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'files');
const templateMedia = join(here, '..', '..', 'templates', 'seed', 'media');
const ROBOTO = '/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF';

const svg = (w, h, body, defs = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${defs ? `<defs>${defs}</defs>` : ''}${body}</svg>`;
const f1 = (n) => n.toFixed(1);
const TAU = Math.PI * 2;

/** A CSS hex colour from hue (degrees), saturation and lightness (0–1). */
function hsl(h, s, l) {
  const k = (n) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const c = (n) => Math.round(255 * (l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1))));
  return `#${[c(0), c(8), c(4)].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

const stops = (colors) => colors.map((c, i) => `<stop offset="${(i / (colors.length - 1)).toFixed(3)}" stop-color="${c}"/>`).join('');

// ---------------------------------------------------------------- backgrounds and textures

function linear(w, h, colors, angle) {
  const r = (angle * Math.PI) / 180;
  const [x1, y1, x2, y2] = [0.5 - Math.cos(r) / 2, 0.5 - Math.sin(r) / 2, 0.5 + Math.cos(r) / 2, 0.5 + Math.sin(r) / 2].map((v) => v.toFixed(3));
  return svg(w, h, `<rect width="${w}" height="${h}" fill="url(#g)"/>`, `<linearGradient id="g" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}">${stops(colors)}</linearGradient>`);
}

function radialGlow(w, h, inner, outer) {
  return svg(w, h, `<rect width="${w}" height="${h}" fill="url(#g)"/>`,
    `<radialGradient id="g" cx="0.5" cy="0.38" r="0.75"><stop offset="0" stop-color="${inner}"/><stop offset="1" stop-color="${outer}"/></radialGradient>`);
}

function pastelMesh() {
  const defs = '<filter id="b" x="-50%" y="-50%" width="200%" height="200%"><feGaussianBlur stdDeviation="140"/></filter>';
  return svg(1080, 1080, `<rect width="1080" height="1080" fill="#fdf2f8"/>
    <g filter="url(#b)">
      <circle cx="180" cy="220" r="380" fill="#c4b5fd"/>
      <circle cx="920" cy="180" r="340" fill="#99f6e4"/>
      <circle cx="820" cy="900" r="400" fill="#fbcfe8"/>
      <circle cx="140" cy="940" r="300" fill="#fde68a"/>
    </g>`, defs);
}

/** Film grain to lay over pictures: mid-grey noise, transparent where it is faint. */
async function grain(size) {
  const rnd = random(11);
  const px = Buffer.alloc(size * size * 4);
  for (let i = 0; i < size * size; i++) {
    const v = Math.round(rnd() * 255);
    px.set([v, v, v, Math.round(Math.abs(v - 128) * 0.35)], i * 4);
  }
  return sharp(px, { raw: { width: size, height: size, channels: 4 } }).png({ compressionLevel: 9 }).toBuffer();
}

/**
 * A base colour under layers of fractal noise: each layer's alpha is `gain * noise + offset`
 * (feTurbulence's red channel), tinted one colour; `stitchTiles` makes the texture tile.
 */
function turbulence(w, h, base, layers) {
  const defs = layers.map(({ freq, octaves, seed, tint, gain, offset }, i) => `<filter id="t${i}" x="0" y="0" width="100%" height="100%">
    <feTurbulence type="fractalNoise" baseFrequency="${freq}" numOctaves="${octaves}" seed="${seed}" stitchTiles="stitch"/>
    <feColorMatrix type="matrix" values="0 0 0 0 ${tint[0]}  0 0 0 0 ${tint[1]}  0 0 0 0 ${tint[2]}  ${gain} 0 0 0 ${offset}"/>
  </filter>`).join('');
  return svg(w, h, `<rect width="${w}" height="${h}" fill="${base}"/>${layers.map((_, i) => `<rect width="${w}" height="${h}" filter="url(#t${i})"/>`).join('')}`, defs);
}

function grid(w, h) {
  const defs = `<pattern id="s" width="24" height="24" patternUnits="userSpaceOnUse"><path d="M24 0 L0 0 0 24" fill="none" stroke="#ffffff" stroke-opacity="0.06" stroke-width="1"/></pattern>
    <pattern id="l" width="120" height="120" patternUnits="userSpaceOnUse"><path d="M120 0 L0 0 0 120" fill="none" stroke="#ffffff" stroke-opacity="0.14" stroke-width="1.5"/></pattern>`;
  return svg(w, h, `<rect width="${w}" height="${h}" fill="#0f172a"/><rect width="${w}" height="${h}" fill="url(#s)"/><rect width="${w}" height="${h}" fill="url(#l)"/>`, defs);
}

function halftone(size) {
  let dots = '';
  const step = 32;
  for (let y = step / 2; y < size; y += step) {
    for (let x = step / 2; x < size; x += step) {
      const r = 2 + 11 * (x / size) * (1 - Math.abs(y / size - 0.5));
      dots += `<circle cx="${x}" cy="${y}" r="${f1(r)}"/>`;
    }
  }
  return svg(size, size, `<g fill="#111827">${dots}</g>`);
}

const images = [
  ['gradient-sunrise.jpg', () => linear(1920, 1080, ['#f97316', '#ec4899', '#7c3aed'], 20), 'jpeg'],
  ['gradient-ocean.jpg', () => linear(1920, 1080, ['#0ea5e9', '#2563eb', '#1e1b4b'], 70), 'jpeg'],
  ['gradient-mint.webp', () => linear(1920, 1080, ['#a7f3d0', '#67e8f9', '#bfdbfe'], 135), 'webp'],
  ['gradient-midnight.png', () => linear(1280, 720, ['#020617', '#1e293b'], 90), 'png'],
  ['gradient-glow-vertical.jpg', () => radialGlow(1080, 1920, '#fb7185', '#1e1b4b'), 'jpeg'],
  ['gradient-pastel-mesh.jpg', pastelMesh, 'jpeg'],
  ['texture-paper.jpg', () => turbulence(1024, 1024, '#f4eee2', [
    { freq: 0.012, octaves: 4, seed: 3, tint: [0.55, 0.45, 0.3], gain: 0.9, offset: -0.32 },
    { freq: '0.7 0.08', octaves: 2, seed: 4, tint: [0.4, 0.33, 0.22], gain: 0.8, offset: -0.3 },
  ]), 'jpeg'],
  ['texture-concrete.webp', () => turbulence(1024, 1024, '#a1a1aa', [
    { freq: 0.02, octaves: 5, seed: 8, tint: [0.15, 0.15, 0.17], gain: 1.6, offset: -0.55 },
    { freq: 0.9, octaves: 1, seed: 9, tint: [0.1, 0.1, 0.1], gain: 1.4, offset: -0.55 },
  ]), 'webp'],
  ['texture-grid-dark.png', () => grid(1920, 1080), 'png8'],
  ['texture-halftone.png', () => halftone(1024), 'png8'],
];

async function writeImages() {
  for (const [name, draw, format] of images) {
    const image = sharp(Buffer.from(draw()));
    const encoded = format.startsWith('png') ? image.png({ compressionLevel: 9, palette: format === 'png8' })
      : format === 'webp' ? image.webp({ quality: 82, effort: 6 })
      : image.jpeg({ quality: 84, mozjpeg: true });
    await encoded.toFile(join(out, name));
  }
  writeFileSync(join(out, 'texture-film-grain.png'), await grain(256));
  for (const file of readdirSync(templateMedia).sort()) copyFileSync(join(templateMedia, file), join(out, file));
}

// ---------------------------------------------------------------- shapes and icons (SVG)

function starPoints(cx, cy, outer, inner, points) {
  const list = [];
  for (let i = 0; i < points * 2; i++) {
    const r = i % 2 === 0 ? outer : inner;
    const a = -Math.PI / 2 + (i * Math.PI) / points;
    list.push(`${f1(cx + r * Math.cos(a))},${f1(cy + r * Math.sin(a))}`);
  }
  return list.join(' ');
}

function blobPath(cx, cy, r, seed) {
  const rnd = random(seed);
  const n = 8;
  const pts = Array.from({ length: n }, (_, i) => {
    const a = (i / n) * TAU;
    const rr = r * (0.78 + rnd() * 0.3);
    return [cx + rr * Math.cos(a), cy + rr * Math.sin(a)];
  });
  // Closed Catmull-Rom through the points, as cubic Béziers.
  let d = `M${f1(pts[0][0])} ${f1(pts[0][1])}`;
  for (let i = 0; i < n; i++) {
    const [p0, p1, p2, p3] = [pts[(i - 1 + n) % n], pts[i], pts[(i + 1) % n], pts[(i + 2) % n]];
    const c1 = [p1[0] + (p2[0] - p0[0]) / 6, p1[1] + (p2[1] - p0[1]) / 6];
    const c2 = [p2[0] - (p3[0] - p1[0]) / 6, p2[1] - (p3[1] - p1[1]) / 6];
    d += ` C${f1(c1[0])} ${f1(c1[1])} ${f1(c2[0])} ${f1(c2[1])} ${f1(p2[0])} ${f1(p2[1])}`;
  }
  return `${d} Z`;
}

function hexagonPoints(cx, cy, r) {
  return Array.from({ length: 6 }, (_, i) => {
    const a = -Math.PI / 2 + (i * Math.PI) / 3;
    return `${f1(cx + r * Math.cos(a))},${f1(cy + r * Math.sin(a))}`;
  }).join(' ');
}

function waveDivider() {
  let d = 'M0 60';
  for (let x = 0; x <= 1440; x += 30) d += ` L${x} ${f1(60 + Math.sin((x / 1440) * TAU * 2) * 28)}`;
  return svg(1440, 120, `<path d="${d} L1440 120 L0 120 Z" fill="#6366f1"/>`);
}

const shapes = {
  'shape-circle.svg': () => svg(512, 512, '<circle cx="256" cy="256" r="240" fill="url(#g)"/>',
    `<linearGradient id="g" x1="0" y1="0" x2="1" y2="1">${stops(['#22d3ee', '#6366f1'])}</linearGradient>`),
  'shape-rounded-square.svg': () => svg(512, 512, '<rect x="16" y="16" width="480" height="480" rx="96" fill="#f97316"/>'),
  'shape-star.svg': () => svg(512, 512, `<polygon points="${starPoints(256, 270, 240, 100, 5)}" fill="#facc15"/>`),
  'shape-blob.svg': () => svg(512, 512, `<path d="${blobPath(256, 256, 230, 5)}" fill="#ec4899"/>`),
  'shape-hexagon.svg': () => svg(512, 512, `<polygon points="${hexagonPoints(256, 256, 240)}" fill="#10b981"/>`),
  'shape-wave-divider.svg': waveDivider,
  'shape-speech-bubble.svg': () => svg(512, 512, '<path d="M96 48 H416 A64 64 0 0 1 480 112 V312 A64 64 0 0 1 416 376 H232 L128 464 L144 376 H96 A64 64 0 0 1 32 312 V112 A64 64 0 0 1 96 48 Z" fill="#ffffff" stroke="#0f172a" stroke-width="16" stroke-linejoin="round"/>'),
  'shape-arrow-right.svg': () => svg(512, 256, '<path d="M16 96 H336 V24 L496 128 L336 232 V160 H16 Z" fill="#0f172a"/>'),
};

/** Line icons on a 24-unit grid, drawn 96 px wide with a 2-unit stroke. */
const icon = (body) => `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 24 24" fill="none" stroke="#0f172a" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`;
const icons = {
  'icon-play.svg': () => icon('<circle cx="12" cy="12" r="10"/><path d="M10 8 L16 12 L10 16 Z" fill="#0f172a"/>'),
  'icon-check.svg': () => icon('<circle cx="12" cy="12" r="10"/><path d="M7.5 12.5 L10.5 15.5 L16.5 9"/>'),
  'icon-heart.svg': () => icon('<path d="M12 20.5 C12 20.5 3 15 3 8.8 A4.8 4.8 0 0 1 12 6.3 A4.8 4.8 0 0 1 21 8.8 C21 15 12 20.5 12 20.5 Z"/>'),
  'icon-location-pin.svg': () => icon('<path d="M12 22 C12 22 19 15 19 9.5 A7 7 0 0 0 5 9.5 C5 15 12 22 12 22 Z"/><circle cx="12" cy="9.5" r="2.5"/>'),
  'icon-mail.svg': () => icon('<rect x="2.5" y="5" width="19" height="14" rx="2"/><path d="M3 6.5 L12 13 L21 6.5"/>'),
  'icon-calendar.svg': () => icon('<rect x="3" y="4.5" width="18" height="16.5" rx="2"/><path d="M3 9.5 H21 M8 2.5 V6.5 M16 2.5 V6.5"/><circle cx="8" cy="14" r="0.5" fill="#0f172a"/><circle cx="12" cy="14" r="0.5" fill="#0f172a"/><circle cx="16" cy="14" r="0.5" fill="#0f172a"/>'),
  'icon-bell.svg': () => icon('<path d="M6 16 V10.5 A6 6 0 0 1 18 10.5 V16 L20 18 H4 Z"/><path d="M10 21 H14"/>'),
  'icon-search.svg': () => icon('<circle cx="10.5" cy="10.5" r="6.5"/><path d="M15.5 15.5 L21 21"/>'),
  'icon-arrow-up-right.svg': () => icon('<path d="M7 17 L17 7 M9 7 H17 V15"/>'),
  'icon-star.svg': () => icon(`<polygon points="${starPoints(12, 12.8, 10, 4.2, 5)}"/>`),
};

function writeSvgs() {
  for (const [name, draw] of Object.entries({ ...shapes, ...icons })) writeFileSync(join(out, name), `${draw()}\n`);
}

// ---------------------------------------------------------------- ffmpeg

/** Runs Debian's ffmpeg with bitexact output (no encoder version or date), feeding `input` to stdin. */
function ffmpeg(args, input) {
  const bitexact = ['-fflags', '+bitexact', '-flags:v', '+bitexact', '-flags:a', '+bitexact', '-map_metadata', '-1'];
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args.slice(0, -1), ...bitexact, args.at(-1)], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', (err) => reject(new Error(`ffmpeg could not start (apt-get install ffmpeg): ${err.message}`)));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${stderr.trim()}`))));
    child.stdin.on('error', () => {});
    if (input) input(child.stdin).then(() => child.stdin.end(), reject);
    else child.stdin.end();
  });
}

// ---------------------------------------------------------------- video loops

const FPS = 30;

/**
 * A seamless loop: `frame(t)` draws the SVG at phase t in [0, 1), and the last frame leads back to
 * the first, so a player that repeats the file shows no seam.
 */
async function loop(name, { w, h, seconds }, frame, codec) {
  const frames = seconds * FPS;
  const encode = codec === 'vp9'
    ? ['-c:v', 'libvpx-vp9', '-b:v', '0', '-crf', '40', '-deadline', 'good', '-cpu-used', '2', '-row-mt', '0', '-threads', '1', '-pix_fmt', 'yuv420p']
    : ['-c:v', 'libx264', '-preset', 'slow', '-crf', '27', '-pix_fmt', 'yuv420p', '-profile:v', 'high', '-threads', '1', '-movflags', '+faststart'];
  await ffmpeg(['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${w}x${h}`, '-r', String(FPS), '-i', 'pipe:0', '-an', ...encode, join(out, name)], async (stdin) => {
    for (let i = 0; i < frames; i++) {
      const rgb = await sharp(Buffer.from(frame(i / frames, w, h))).removeAlpha().raw().toBuffer();
      if (!stdin.write(rgb)) await new Promise((r) => stdin.once('drain', r));
    }
  });
}

/** Large soft colour fields (violet, pink, cyan) circling slowly over navy. */
function auroraDrift(t, w, h) {
  const fields = [['#7c3aed', 0.3, 0.35, 0], ['#ec4899', 0.7, 0.3, 1 / 3], ['#06b6d4', 0.55, 0.75, 2 / 3]];
  const defs = fields.map(([color], i) => `<radialGradient id="f${i}"><stop offset="0" stop-color="${color}" stop-opacity="0.85"/><stop offset="1" stop-color="${color}" stop-opacity="0"/></radialGradient>`).join('');
  const body = fields.map(([, x, y, p], i) => {
    const a = TAU * (t + p);
    return `<ellipse cx="${f1(x * w + 0.12 * w * Math.cos(a))}" cy="${f1(y * h + 0.12 * h * Math.sin(a))}" rx="${f1(0.45 * w)}" ry="${f1(0.6 * h)}" fill="url(#f${i})"/>`;
  }).join('');
  return svg(w, h, `<rect width="${w}" height="${h}" fill="#0f1029"/>${body}`, defs);
}

const bokehDots = (() => {
  const rnd = random(21);
  return Array.from({ length: 16 }, () => ({ x: rnd(), y: rnd(), r: 40 + rnd() * 90, ax: 30 + rnd() * 60, ay: 20 + rnd() * 50, p: rnd(), hue: 180 + rnd() * 140 }));
})();

function bokeh(t, w, h) {
  const defs = bokehDots.map((d, i) => `<radialGradient id="d${i}"><stop offset="0" stop-color="${hsl(d.hue, 0.9, 0.7)}" stop-opacity="0.55"/><stop offset="1" stop-color="${hsl(d.hue, 0.9, 0.7)}" stop-opacity="0"/></radialGradient>`).join('');
  const dots = bokehDots.map((d, i) => {
    const a = TAU * (t + d.p);
    return `<circle cx="${f1(d.x * w + d.ax * Math.cos(a))}" cy="${f1(d.y * h + d.ay * Math.sin(a))}" r="${f1(d.r)}" fill="url(#d${i})"/>`;
  }).join('');
  return svg(w, h, `<rect width="${w}" height="${h}" fill="#0b1026"/>${dots}`, defs);
}

function waves(t, w, h) {
  const layers = [['#38bdf8', 0.5, 60, 1], ['#6366f1', 0.6, 45, 2], ['#a855f7', 0.7, 35, 1], ['#1e1b4b', 1, 25, 3]];
  const body = layers.map(([color, opacity, amp, k], i) => {
    const base = h * (0.45 + i * 0.13);
    let d = `M0 ${f1(base)}`;
    for (let x = 0; x <= w; x += 16) d += ` L${x} ${f1(base + amp * Math.sin((x / w) * TAU * (i % 2 ? 1 : 2) + TAU * t * k + i))}`;
    return `<path d="${d} L${w} ${h} L0 ${h} Z" fill="${color}" fill-opacity="${opacity}"/>`;
  }).join('');
  return svg(w, h, `<rect width="${w}" height="${h}" fill="#e0f2fe"/>${body}`);
}

function rings(t, w, h) {
  const gap = 60;
  let body = '';
  for (let k = 0; k < 9; k++) {
    const r = (k + t) * gap;
    body += `<circle cx="${w / 2}" cy="${h / 2}" r="${f1(r)}" fill="none" stroke="#f59e0b" stroke-width="10" stroke-opacity="${(Math.max(0, 1 - r / (gap * 8))).toFixed(3)}"/>`;
  }
  return svg(w, h, `<rect width="${w}" height="${h}" fill="#111827"/>${body}`);
}

const particles = (() => {
  const rnd = random(33);
  return Array.from({ length: 60 }, () => ({ x: rnd(), y: rnd(), r: 2 + rnd() * 6, laps: 1 + Math.floor(rnd() * 2), sway: rnd() * 20, o: 0.3 + rnd() * 0.6 }));
})();

function rising(t, w, h) {
  const dots = particles.map((p) => {
    const y = (((p.y - t * p.laps) % 1) + 1) % 1;
    return `<circle cx="${f1(p.x * w + p.sway * Math.sin(TAU * (t * p.laps + p.x)))}" cy="${f1(y * (h + 20) - 10)}" r="${f1(p.r)}" fill="#fde68a" fill-opacity="${p.o.toFixed(2)}"/>`;
  }).join('');
  return svg(w, h, `<rect width="${w}" height="${h}" fill="url(#bg)"/>${dots}`, `<linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">${stops(['#312e81', '#0f172a'])}</linearGradient>`);
}

function stripes(t, w, h) {
  const period = 80;
  return svg(w, h, `<rect width="${w}" height="${h}" fill="#fef3c7"/><rect x="${-period * 2}" width="${w + period * 4}" height="${h}" fill="url(#s)" transform="translate(${f1(t * period * Math.SQRT2)} 0)"/>`,
    `<pattern id="s" width="${period}" height="${period}" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="${period / 2}" height="${period}" fill="#f59e0b"/></pattern>`);
}

async function writeLoops() {
  await loop('loop-aurora-drift.mp4', { w: 1280, h: 720, seconds: 4 }, auroraDrift);
  await loop('loop-bokeh.mp4', { w: 1280, h: 720, seconds: 4 }, bokeh);
  await loop('loop-waves.mp4', { w: 1280, h: 720, seconds: 3 }, waves);
  await loop('loop-rings-square.mp4', { w: 720, h: 720, seconds: 2 }, rings);
  await loop('loop-particles-vertical.mp4', { w: 720, h: 1280, seconds: 4 }, rising);
  await loop('loop-stripes.webm', { w: 1280, h: 720, seconds: 2 }, stripes, 'vp9');
}

// ---------------------------------------------------------------- audio

/** Encodes a mono signal computed here (44.1 kHz samples in [-1, 1]) with ffmpeg. */
async function sound(name, seconds, sample, encode) {
  const rate = 44100;
  const pcm = Buffer.alloc(Math.round(seconds * rate) * 2);
  for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(32767 * Math.max(-1, Math.min(1, sample(i / rate)))), i * 2);
  await ffmpeg(['-f', 's16le', '-ar', String(rate), '-ac', '1', '-i', 'pipe:0', ...encode, join(out, name)], async (stdin) => {
    stdin.write(pcm);
  });
}

const fade = (t, total, fin, fout) => Math.min(1, t / fin, (total - t) / fout);
const MP3 = ['-c:a', 'libmp3lame', '-b:a', '128k', '-write_xing', '0', '-id3v2_version', '0'];
const WAV = ['-c:a', 'pcm_s16le'];

/** An exponential sweep from f0 to f1 over d seconds: the phase (cycles) at time t. */
const sweep = (f0, f1hz, d, t) => ((f0 * d) / Math.log(f1hz / f0)) * (Math.pow(f1hz / f0, t / d) - 1);

async function writeSounds() {
  await sound('stinger-rise.mp3', 1.6, (t) => 0.35 * fade(t, 1.6, 0.05, 0.35) * (Math.sin(TAU * sweep(220, 880, 1.6, t)) + 0.5 * Math.sin(TAU * sweep(330, 1320, 1.6, t))), MP3);
  const chime = [[0, 523.25], [0.14, 659.25], [0.28, 783.99], [0.42, 1046.5]];
  await sound('stinger-chime.mp3', 2.2, (t) => chime.reduce((sum, [at, f]) => {
    if (t < at) return sum;
    const u = t - at;
    return sum + 0.22 * Math.exp(-u * 3.2) * Math.min(1, u / 0.004) * (Math.sin(TAU * f * u) + 0.3 * Math.sin(TAU * 2 * f * u) + 0.1 * Math.sin(TAU * 3 * f * u));
  }, 0) * fade(t, 2.2, 0.001, 0.1), MP3);
  // A whoosh: seeded noise through a one-pole low-pass whose cut-off rises and falls.
  const rnd = random(44);
  let low = 0;
  await sound('whoosh.mp3', 1.2, (t) => {
    const shape = Math.sin((Math.PI * t) / 1.2);
    low += (0.02 + 0.25 * shape * shape) * ((rnd() * 2 - 1) - low);
    return 0.9 * low * shape;
  }, MP3);
  await sound('tone-a440.wav', 1, (t) => 0.5 * fade(t, 1, 0.01, 0.01) * Math.sin(TAU * 440 * t), WAV);
  await sound('metronome-120bpm.wav', 2, (t) => {
    const beat = Math.floor(t / 0.5);
    const u = t - beat * 0.5;
    return 0.7 * Math.exp(-u * 60) * Math.sin(TAU * (beat === 0 ? 1600 : 1000) * u);
  }, WAV);
  const chord = [220, 261.63, 329.63, 440];
  await sound('pad-a-minor.flac', 4, (t) => 0.16 * fade(t, 4, 1.2, 1.2) * chord.reduce((sum, f, i) => sum + Math.sin(TAU * f * t + i) * (1 + 0.15 * Math.sin(TAU * 0.5 * t + i)), 0), ['-c:a', 'flac', '-compression_level', '8']);
}

// ---------------------------------------------------------------- fonts

/**
 * WOFF 1.0 (W3C): the sfnt's tables, each zlib-compressed when that is smaller, behind a WOFF header
 * and table directory. The font data itself is unchanged, and no metadata block is added.
 */
function woff(sfnt) {
  const numTables = sfnt.readUInt16BE(4);
  const tables = [];
  for (let i = 0; i < numTables; i++) {
    const at = 12 + i * 16;
    const offset = sfnt.readUInt32BE(at + 8);
    const length = sfnt.readUInt32BE(at + 12);
    const data = sfnt.subarray(offset, offset + length);
    const packed = deflateSync(data, { level: 9 });
    tables.push({ tag: sfnt.subarray(at, at + 4), checksum: sfnt.readUInt32BE(at + 4), length, data: packed.length < length ? packed : data });
  }
  const pad4 = (n) => (n + 3) & ~3;
  let offset = 44 + numTables * 20;
  const dir = Buffer.alloc(numTables * 20);
  tables.forEach((t, i) => {
    t.tag.copy(dir, i * 20);
    dir.writeUInt32BE(offset, i * 20 + 4);
    dir.writeUInt32BE(t.data.length, i * 20 + 8);
    dir.writeUInt32BE(t.length, i * 20 + 12);
    dir.writeUInt32BE(t.checksum, i * 20 + 16);
    t.offset = offset;
    offset += pad4(t.data.length);
  });
  const file = Buffer.alloc(offset);
  file.write('wOFF', 0, 'latin1');
  sfnt.copy(file, 4, 0, 4); // flavor: the sfnt version
  file.writeUInt32BE(offset, 8);
  file.writeUInt16BE(numTables, 12);
  file.writeUInt32BE(12 + numTables * 16 + tables.reduce((n, t) => n + pad4(t.length), 0), 16);
  file.writeUInt16BE(1, 20); // majorVersion 1.0
  dir.copy(file, 44);
  for (const t of tables) t.data.copy(file, t.offset);
  return file;
}

async function writeFonts() {
  writeFileSync(join(out, 'roboto-regular.woff'), woff(readFileSync(join(ROBOTO, 'Roboto-Regular.ttf'))));
  writeFileSync(join(out, 'roboto-bold.woff2'), await compressWoff2(readFileSync(join(ROBOTO, 'Roboto-Bold.ttf'))));
}

// ---------------------------------------------------------------- Lottie (bodymovin JSON)

const still = (k) => ({ a: 0, k });
const EASE = { i: { x: [0.42], y: [1] }, o: { x: [0.58], y: [0] } };
/** An animated property through [frame, value] keys with ease in-out; the last key holds. */
const keys = (...list) => ({
  a: 1,
  k: list.map(([t, s], i) => (i < list.length - 1 ? { t, s: [s].flat(), ...EASE } : { t, s: [s].flat() })),
});
const rgba = (hex) => [1, 3, 5].map((i) => Math.round((parseInt(hex.slice(i, i + 2), 16) / 255) * 1000) / 1000).concat(1);
const transform = (extra = {}) => ({ ty: 'tr', nm: 'Transform', p: still([0, 0]), a: still([0, 0]), s: still([100, 100]), r: still(0), o: still(100), sk: still(0), sa: still(0), ...extra });
const fill = (hex) => ({ ty: 'fl', nm: 'Fill', c: still(rgba(hex)), o: still(100), r: 1, bm: 0 });
const stroke = (hex, width) => ({ ty: 'st', nm: 'Stroke', c: still(rgba(hex)), o: still(100), w: still(width), lc: 2, lj: 2, ml: 4, bm: 0 });
const ellipse = (size, at = [0, 0]) => ({ ty: 'el', nm: 'Ellipse', d: 1, p: still(at), s: still(size) });
const rect = (size, radius, at = [0, 0]) => ({ ty: 'rc', nm: 'Rectangle', d: 1, p: still(at), s: still(size), r: still(radius) });
const path = (v, closed, inT = v.map(() => [0, 0]), outT = v.map(() => [0, 0])) => ({ ty: 'sh', nm: 'Path', d: 1, ks: still({ i: inT, o: outT, v, c: closed }) });
const trim = (end, start = still(0)) => ({ ty: 'tm', nm: 'Trim Paths', s: start, e: end, o: still(0), m: 1 });
const group = (nm, items, tr = {}) => ({ ty: 'gr', nm, it: [...items, transform(tr)] });

function layer(ind, nm, shapes, op, ks = {}) {
  return {
    ddd: 0, ind, ty: 4, nm, sr: 1, ao: 0, ip: 0, op, st: 0, bm: 0,
    ks: { o: still(100), r: still(0), p: still([0, 0, 0]), a: still([0, 0, 0]), s: still([100, 100, 100]), ...ks },
    shapes,
  };
}

const animation = (nm, size, op, layers) => ({ v: '5.7.4', fr: 30, ip: 0, op, w: size, h: size, nm, ddd: 0, assets: [], layers, markers: [] });

const lotties = {
  'lottie-pulse-dot.json': () => animation('Pulse dot', 200, 60, [
    layer(1, 'Ring', [group('Ring', [ellipse([80, 80]), stroke('#6366f1', 6)])], 60, {
      p: still([100, 100, 0]), s: keys([0, [100, 100, 100]], [60, [230, 230, 100]]), o: keys([0, 90], [60, 0]),
    }),
    layer(2, 'Dot', [group('Dot', [ellipse([80, 80]), fill('#6366f1')])], 60, {
      p: still([100, 100, 0]), s: keys([0, [90, 90, 100]], [30, [110, 110, 100]], [60, [90, 90, 100]]),
    }),
  ]),
  'lottie-loading-spinner.json': () => animation('Loading spinner', 200, 45, [
    layer(1, 'Arc', [group('Arc', [ellipse([120, 120]), trim(keys([0, 10], [22, 75], [45, 10])), stroke('#0ea5e9', 14)])], 45, {
      p: still([100, 100, 0]), r: { a: 1, k: [{ t: 0, s: [0], i: { x: [1], y: [1] }, o: { x: [0], y: [0] } }, { t: 45, s: [360] }] },
    }),
    layer(2, 'Track', [group('Track', [ellipse([120, 120]), stroke('#e2e8f0', 14)])], 45, { p: still([100, 100, 0]) }),
  ]),
  'lottie-bouncing-ball.json': () => animation('Bouncing ball', 240, 48, [
    layer(1, 'Ball', [group('Ball', [ellipse([56, 56]), fill('#f97316')])], 48, {
      p: { a: 1, k: [
        { t: 0, s: [120, 50, 0], i: { x: [0.55], y: [0] }, o: { x: [0.3], y: [0] } },
        { t: 24, s: [120, 182, 0], i: { x: [0.45], y: [1] }, o: { x: [0.7], y: [1] } },
        { t: 48, s: [120, 50, 0] },
      ] },
      s: keys([0, [100, 100, 100]], [22, [96, 104, 100]], [24, [118, 84, 100]], [27, [96, 104, 100]], [48, [100, 100, 100]]),
    }),
    layer(2, 'Shadow', [group('Shadow', [ellipse([70, 14]), fill('#cbd5e1')])], 48, {
      p: still([120, 214, 0]), s: keys([0, [45, 45, 100]], [24, [100, 100, 100]], [48, [45, 45, 100]]),
    }),
  ]),
  'lottie-check-mark.json': () => animation('Check mark', 200, 60, [
    layer(1, 'Tick', [group('Tick', [path([[-30, 2], [-8, 24], [32, -20]], false), trim(keys([18, 0], [38, 100])), stroke('#ffffff', 14)])], 60, { p: still([100, 100, 0]) }),
    layer(2, 'Disc', [group('Disc', [ellipse([150, 150]), fill('#22c55e')])], 60, {
      p: still([100, 100, 0]), s: keys([0, [0, 0, 100]], [14, [110, 110, 100]], [20, [100, 100, 100]]),
    }),
  ]),
  'lottie-equalizer.json': () => animation('Equalizer bars', 200, 40, [0, 1, 2, 3].map((i) => {
    // Each bar runs through the same heights, a quarter of the cycle after its neighbour.
    const heights = [30, 100, 55, 80];
    const frames = [0, 1, 2, 3, 4].map((k) => [k * 10, [100, heights[(k + i) % 4], 100]]);
    return layer(i + 1, `Bar ${i + 1}`, [group('Bar', [rect([26, 120], 6, [0, -60]), fill('#a855f7')])], 40, {
      p: still([46 + i * 36, 160, 0]), s: keys(...frames),
    });
  })),
  'lottie-heart-beat.json': () => animation('Heart beat', 200, 40, [
    layer(1, 'Heart', [group('Heart', [
      path([[0, 40], [-50, -15], [0, -28], [50, -15]], true, [[35, -27.5], [0, 15], [-8, -30], [0, -28]], [[-35, -27.5], [0, -28], [8, -30], [0, 15]]),
      fill('#ef4444'),
    ])], 40, {
      p: still([100, 108, 0]), s: keys([0, [100, 100, 100]], [6, [122, 122, 100]], [12, [100, 100, 100]], [18, [115, 115, 100]], [26, [100, 100, 100]], [40, [100, 100, 100]]),
    }),
  ]),
};

function writeLotties() {
  for (const [name, make] of Object.entries(lotties)) writeFileSync(join(out, name), `${JSON.stringify(make())}\n`);
}

// ---------------------------------------------------------------- LICENCES.md

const LICENCES_HEAD = `# Licences of the stock asset library

The stock (\`global\`) asset library, catalogued in \`libs/assets/src/stock.ts\`, holds three kinds of file.
This file is written by \`make-stock.mjs\` from the catalog; its test checks that every item is listed.

**Made by this project** (\`Made by the project: …\`): drawn or computed in \`make-stock.mjs\`
(backgrounds, textures, shapes, icons, video loops, sounds, Lottie animations) or in
\`libs/templates/seed/generate-media.mjs\` (the template library's pictures, copied here). No third-party
artwork, photograph, recording or font outline is embedded. They are dedicated to the public domain
under [CC0 1.0](https://creativecommons.org/publicdomain/zero/1.0/): anyone may copy, modify and
redistribute them, also in renders, without asking or crediting.

**Installed from Debian packages** (\`Debian package <name>: <path>\`): not in this repository; the
start and test scripts (\`scripts/stock-packages.txt\`) and the Docker images install the packages. Each
file keeps the licence its package's \`/usr/share/doc/<package>/copyright\` gives it (full texts there
and in \`/usr/share/common-licenses\`):

| Package | Files used | Copyright | Licence |
|---|---|---|---|
| fonts-lato | Lato | Łukasz Dziedzic (tyPoland), Reserved Font Name "Lato" | OFL-1.1 |
| fonts-open-sans | Open Sans | Google Corporation | Apache-2.0 |
| fonts-roboto-unhinted | Roboto, Roboto Condensed | Google Inc. | Apache-2.0 |
| fonts-inter | Inter | The Inter Project Authors | OFL-1.1 AND Apache-2.0 |
| fonts-bebas-neue | Bebas Neue | Ryoichi Tsunekawa | OFL-1.1 |
| fonts-lobster | Lobster Two | Pablo Impallari | OFL-1.1 |
| fonts-ebgaramond | EB Garamond | Georg Duffner | OFL-1.1 |
| fonts-comfortaa | Comfortaa | Johan Aakerlund, Reserved Font Name "Comfortaa" | OFL-1.1 |
| fonts-league-spartan | League Spartan | Micah Rich | OFL-1.1 |
| fonts-cabin | Cabin | Pablo Impallari, Igino Marini | OFL-1.1 |
| fonts-dejavu-core | DejaVu Sans Mono | Bitstream, Inc. (DejaVu changes: public domain) | Bitstream-Vera |
| fonts-liberation2 | Liberation Serif | Google Corporation, Red Hat, Inc. | OFL-1.1 |
| sound-theme-freedesktop | bell, complete, trash-empty | Dr. Richard Boulanger et al | CC-BY-3.0 |
| sound-theme-freedesktop | camera-shutter | freesound user horsthorstensen | CC-BY-SA-3.0 |
| sound-theme-freedesktop | message | Ivica Bukvic | CC-BY-SA-3.0 |
| sound-theme-freedesktop | alarm-clock-elapsed | Tim/corsica_s | CC-BY-SA-3.0 |
| sound-theme-freedesktop | phone-incoming-call | Damien Sandras | GPL-2.0-or-later |
| yaru-theme-sound | bell, complete, desktop-login, dialog-question, message-new-instant | Mads Rosendahl | CC-BY-SA-4.0 |

The CC BY and CC BY-SA sounds must be credited where they are used (each item's description names
the author). A video that synchronises a CC BY-SA or GPL sound is an adaptation of it and has to be
shared under the same licence; the project's own CC0 sounds carry no such condition.

**Repacked from a Debian font** (\`roboto-regular.woff\`, \`roboto-bold.woff2\`): Roboto (Apache-2.0,
Google Inc.) from fonts-roboto-unhinted, changed by \`make-stock.mjs\` only in packing: the WOFF holds
the TrueType tables unchanged, zlib-compressed; the WOFF2 is Google's woff2 encoder's lossless packing.
The Apache License 2.0 is at \`/usr/share/common-licenses/Apache-2.0\`.

## Every item

| Slug | Type | Folder | File | Source | Licence |
|---|---|---|---|---|---|
`;

/** LICENCES.md from the catalog (Node reads the TypeScript catalog directly: type stripping). */
async function writeLicences() {
  const { STOCK_ITEMS } = await import('../src/stock.ts');
  const rows = STOCK_ITEMS.map((item) => {
    const file = 'bundled' in item.file ? `files/${item.file.bundled}` : item.file.debian;
    return `| ${item.slug} | ${item.type} | ${item.folder} | ${file} | ${item.source} | ${item.licence} |`;
  });
  writeFileSync(join(here, 'LICENCES.md'), `${LICENCES_HEAD}${rows.join('\n')}\n`);
}

// ---------------------------------------------------------------- run

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await writeImages();
writeSvgs();
await writeLoops();
await writeSounds();
await writeFonts();
writeLotties();
await writeLicences();
let total = 0;
for (const file of readdirSync(out).sort()) {
  const size = statSync(join(out, file)).size;
  total += size;
  console.log(`${file.padEnd(32)} ${(size / 1024).toFixed(1).padStart(8)} KB`);
}
console.log(`${'total'.padEnd(32)} ${(total / 1024).toFixed(1).padStart(8)} KB`);
