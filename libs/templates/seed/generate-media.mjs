#!/usr/bin/env node
/**
 * Generates the media of the template library: every picture is drawn here as SVG and rasterised
 * with sharp, so the files are ours (CC0, see MEDIA-LICENCES.md). The output is committed; run this
 * again after changing a drawing:
 *
 *   node libs/templates/seed/generate-media.mjs
 *
 * Output is deterministic (seeded pseudo-random numbers), so a re-run without changes rewrites the
 * same pictures.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
// Node 24 strips the types of the shared generator (mulberry32: the same dots every run).
import { seeded as random } from '../../core/src/random.ts';

const out = join(dirname(fileURLToPath(import.meta.url)), 'media');
mkdirSync(out, { recursive: true });

const svg = (w, h, body, defs = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><defs>${defs}</defs>${body}</svg>`;

/** Soft blurred colour fields on a dark base (backgrounds behind text). */
function aurora() {
  const defs = `<filter id="b" x="-50%" y="-50%" width="200%" height="200%"><feGaussianBlur stdDeviation="110"/></filter>`;
  return svg(1080, 1080, `
    <rect width="1080" height="1080" fill="#0f1029"/>
    <g filter="url(#b)">
      <circle cx="230" cy="290" r="360" fill="#7c3aed"/>
      <circle cx="880" cy="230" r="300" fill="#ec4899"/>
      <circle cx="720" cy="860" r="380" fill="#06b6d4"/>
      <circle cx="150" cy="930" r="240" fill="#2563eb"/>
    </g>
    <rect width="1080" height="1080" fill="#0f1029" fill-opacity="0.25"/>`, defs);
}

function waves() {
  const defs = `
    <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#1e1b4b"/><stop offset="0.55" stop-color="#9d174d"/><stop offset="1" stop-color="#fb923c"/></linearGradient>
    <radialGradient id="sun" cx="0.5" cy="0.5" r="0.5"><stop offset="0" stop-color="#fde68a"/><stop offset="1" stop-color="#fb923c" stop-opacity="0"/></radialGradient>`;
  const wave = (y, amp, color, opacity, phase) => {
    let d = `M0 ${y}`;
    for (let x = 0; x <= 1920; x += 40) d += ` L${x} ${(y + Math.sin((x / 1920) * Math.PI * 3 + phase) * amp).toFixed(1)}`;
    return `<path d="${d} L1920 1080 L0 1080 Z" fill="${color}" fill-opacity="${opacity}"/>`;
  };
  return svg(1920, 1080, `
    <rect width="1920" height="1080" fill="url(#sky)"/>
    <circle cx="1380" cy="640" r="420" fill="url(#sun)"/>
    <circle cx="1380" cy="640" r="150" fill="#fed7aa" fill-opacity="0.9"/>
    ${wave(720, 40, '#7c2d12', 0.55, 0.3)}
    ${wave(800, 55, '#581c87', 0.7, 1.7)}
    ${wave(880, 45, '#3b0764', 0.85, 3.1)}
    ${wave(960, 35, '#1e1b4b', 1, 4.4)}`, defs);
}

function meshDark() {
  const defs = `<filter id="b" x="-50%" y="-50%" width="200%" height="200%"><feGaussianBlur stdDeviation="90"/></filter>
    <pattern id="grid" width="48" height="48" patternUnits="userSpaceOnUse"><path d="M48 0 L0 0 0 48" fill="none" stroke="#ffffff" stroke-opacity="0.05" stroke-width="1"/></pattern>`;
  return svg(1280, 720, `
    <rect width="1280" height="720" fill="#0b1020"/>
    <g filter="url(#b)">
      <circle cx="1050" cy="160" r="260" fill="#0ea5e9" fill-opacity="0.75"/>
      <circle cx="1180" cy="600" r="220" fill="#6366f1" fill-opacity="0.7"/>
      <circle cx="820" cy="420" r="160" fill="#14b8a6" fill-opacity="0.45"/>
    </g>
    <rect width="1280" height="720" fill="url(#grid)"/>`, defs);
}

function mug() {
  const defs = `
    <linearGradient id="body" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#e7e5e4"/><stop offset="0.35" stop-color="#fafaf9"/><stop offset="1" stop-color="#a8a29e"/></linearGradient>
    <linearGradient id="band" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#f97316"/><stop offset="1" stop-color="#c2410c"/></linearGradient>
    <radialGradient id="coffee" cx="0.45" cy="0.4" r="0.6"><stop offset="0" stop-color="#92400e"/><stop offset="1" stop-color="#451a03"/></radialGradient>
    <filter id="soft"><feGaussianBlur stdDeviation="18"/></filter>`;
  return svg(1000, 1000, `
    <ellipse cx="500" cy="860" rx="300" ry="46" fill="#000000" fill-opacity="0.28" filter="url(#soft)"/>
    <path d="M720 430 C860 430 880 560 860 620 C840 690 770 720 715 720" fill="none" stroke="#d6d3d1" stroke-width="44" stroke-linecap="round"/>
    <path d="M720 430 C860 430 880 560 860 620 C840 690 770 720 715 720" fill="none" stroke="#fafaf9" stroke-width="16" stroke-linecap="round" stroke-opacity="0.6"/>
    <path d="M250 360 L750 360 L730 800 C728 840 700 860 660 860 L340 860 C300 860 272 840 270 800 Z" fill="url(#body)"/>
    <path d="M257 520 L743 520 L737 640 L263 640 Z" fill="url(#band)"/>
    <ellipse cx="500" cy="360" rx="250" ry="54" fill="#d6d3d1"/>
    <ellipse cx="500" cy="366" rx="226" ry="42" fill="url(#coffee)"/>
    <ellipse cx="460" cy="356" rx="70" ry="12" fill="#fde68a" fill-opacity="0.25"/>
    <g fill="none" stroke="#ffffff" stroke-opacity="0.55" stroke-width="14" stroke-linecap="round">
      <path d="M420 280 C380 230 460 200 420 140"/>
      <path d="M510 270 C470 210 550 180 510 110"/>
      <path d="M600 280 C560 230 640 200 600 150"/>
    </g>`, defs);
}

function avatar() {
  const defs = `<linearGradient id="bg" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#fde68a"/><stop offset="1" stop-color="#f9a8d4"/></linearGradient>`;
  return svg(800, 800, `
    <rect width="800" height="800" fill="url(#bg)"/>
    <path d="M130 800 C150 610 260 540 400 540 C540 540 650 610 670 800 Z" fill="#1e3a8a"/>
    <path d="M330 560 L400 640 L470 560 Z" fill="#f8fafc"/>
    <rect x="350" y="440" width="100" height="130" rx="40" fill="#e0a878"/>
    <ellipse cx="400" cy="340" rx="150" ry="170" fill="#f1c27d"/>
    <path d="M245 330 C230 170 330 130 410 140 C520 150 580 220 560 340 C540 270 470 240 400 250 C320 260 270 290 245 330 Z" fill="#3f2a1d"/>
    <ellipse cx="345" cy="350" rx="14" ry="18" fill="#3f2a1d"/>
    <ellipse cx="455" cy="350" rx="14" ry="18" fill="#3f2a1d"/>
    <path d="M350 425 C380 450 420 450 450 425" fill="none" stroke="#9a3412" stroke-width="10" stroke-linecap="round"/>
    <circle cx="310" cy="400" r="22" fill="#fb7185" fill-opacity="0.35"/>
    <circle cx="490" cy="400" r="22" fill="#fb7185" fill-opacity="0.35"/>`, defs);
}

function logo() {
  const defs = `<linearGradient id="a" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#22d3ee"/><stop offset="1" stop-color="#6366f1"/></linearGradient>
    <linearGradient id="c" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#f472b6"/><stop offset="1" stop-color="#f59e0b"/></linearGradient>`;
  return svg(512, 512, `
    <g transform="translate(256 256)">
      <rect x="-150" y="-150" width="220" height="220" rx="56" fill="url(#a)" transform="rotate(-12)"/>
      <rect x="-70" y="-70" width="220" height="220" rx="56" fill="url(#c)" fill-opacity="0.9" transform="rotate(12)"/>
      <circle cx="0" cy="0" r="54" fill="#ffffff"/>
    </g>`, defs);
}

function mountains() {
  const rnd = random(7);
  const defs = `<linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#60a5fa"/><stop offset="1" stop-color="#e0f2fe"/></linearGradient>`;
  let trees = '';
  for (let x = -20; x < 1300; x += 26 + rnd() * 20) {
    const h = 70 + rnd() * 60;
    trees += `<path d="M${x.toFixed(0)} 720 L${(x + 22).toFixed(0)} ${(720 - h).toFixed(0)} L${(x + 44).toFixed(0)} 720 Z" fill="#14532d"/>`;
  }
  return svg(1280, 720, `
    <rect width="1280" height="720" fill="url(#sky)"/>
    <circle cx="980" cy="170" r="70" fill="#fef3c7"/>
    <path d="M0 470 L220 250 L380 400 L560 180 L760 420 L930 290 L1280 520 L1280 720 L0 720 Z" fill="#64748b"/>
    <path d="M560 180 L620 250 L590 240 L560 270 L530 245 L505 255 Z" fill="#f8fafc"/>
    <path d="M220 250 L268 300 L240 295 L215 315 L190 290 Z" fill="#f8fafc"/>
    <path d="M0 560 L300 380 L520 520 L760 360 L1000 500 L1280 400 L1280 720 L0 720 Z" fill="#334155"/>
    <path d="M0 640 L260 560 L560 640 L900 570 L1280 650 L1280 720 L0 720 Z" fill="#166534"/>
    ${trees}`, defs);
}

function city() {
  const rnd = random(42);
  const defs = `<linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#1e1b4b"/><stop offset="0.6" stop-color="#7e22ce"/><stop offset="1" stop-color="#f472b6"/></linearGradient>`;
  let stars = '';
  for (let i = 0; i < 70; i++) stars += `<circle cx="${(rnd() * 1280).toFixed(0)}" cy="${(rnd() * 300).toFixed(0)}" r="${(0.8 + rnd() * 1.6).toFixed(1)}" fill="#ffffff" fill-opacity="${(0.4 + rnd() * 0.6).toFixed(2)}"/>`;
  let buildings = '';
  for (let x = 0; x < 1280; ) {
    const w = 60 + Math.floor(rnd() * 70);
    const h = 160 + Math.floor(rnd() * 280);
    const top = 620 - h;
    buildings += `<rect x="${x}" y="${top}" width="${w - 6}" height="${h}" fill="#1e1b4b"/>`;
    for (let wy = top + 16; wy < 600; wy += 26) {
      for (let wx = x + 10; wx < x + w - 20; wx += 18) {
        if (rnd() < 0.45) buildings += `<rect x="${wx}" y="${wy}" width="8" height="12" fill="#fde68a" fill-opacity="${(0.5 + rnd() * 0.5).toFixed(2)}"/>`;
      }
    }
    x += w;
  }
  return svg(1280, 720, `
    <rect width="1280" height="720" fill="url(#sky)"/>
    ${stars}
    <circle cx="1040" cy="150" r="56" fill="#fef9c3"/>
    <circle cx="1062" cy="136" r="50" fill="#3b1d6e" fill-opacity="0.15"/>
    ${buildings}
    <rect y="620" width="1280" height="100" fill="#0f0a2e"/>
    <rect y="640" width="1280" height="4" fill="#f472b6" fill-opacity="0.3"/>
    <rect y="672" width="1280" height="3" fill="#fde68a" fill-opacity="0.2"/>`, defs);
}

function beach() {
  const defs = `<linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#fb7185"/><stop offset="1" stop-color="#fed7aa"/></linearGradient>
    <linearGradient id="sea" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#0e7490"/><stop offset="1" stop-color="#22d3ee"/></linearGradient>`;
  let waves = '';
  for (let y = 450; y < 560; y += 22) waves += `<path d="M${(y * 7) % 200 - 200} ${y} q40 -10 80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0 t80 0" fill="none" stroke="#ecfeff" stroke-opacity="0.35" stroke-width="3"/>`;
  const leaf = (angle) => `<path d="M0 0 C60 -30 140 -20 200 30 C130 0 70 0 0 0 Z" fill="#15803d" transform="rotate(${angle})"/>`;
  return svg(1280, 720, `
    <rect width="1280" height="720" fill="url(#sky)"/>
    <circle cx="420" cy="420" r="120" fill="#fef08a"/>
    <rect y="420" width="1280" height="160" fill="url(#sea)"/>
    ${waves}
    <path d="M0 560 C300 530 700 600 1280 550 L1280 720 L0 720 Z" fill="#fcd34d"/>
    <path d="M0 600 C400 580 800 640 1280 600 L1280 720 L0 720 Z" fill="#fbbf24" fill-opacity="0.6"/>
    <path d="M1010 640 C1000 520 1030 380 1080 300" fill="none" stroke="#78350f" stroke-width="22" stroke-linecap="round"/>
    <g transform="translate(1080 300)">${[-160, -120, -70, -20, 20, 60].map(leaf).join('')}</g>`, defs);
}

function seal() {
  const points = [];
  for (let i = 0; i < 48; i++) {
    const r = i % 2 === 0 ? 190 : 170;
    const a = (i / 48) * Math.PI * 2;
    points.push(`${(200 + r * Math.cos(a)).toFixed(1)},${(200 + r * Math.sin(a)).toFixed(1)}`);
  }
  const defs = `<radialGradient id="gold" cx="0.4" cy="0.35" r="0.7"><stop offset="0" stop-color="#fde68a"/><stop offset="0.6" stop-color="#d4a017"/><stop offset="1" stop-color="#92650a"/></radialGradient>`;
  return svg(400, 400, `
    <polygon points="${points.join(' ')}" fill="url(#gold)"/>
    <circle cx="200" cy="200" r="140" fill="none" stroke="#fef3c7" stroke-width="4" stroke-opacity="0.8"/>
    <circle cx="200" cy="200" r="122" fill="none" stroke="#92650a" stroke-width="2" stroke-dasharray="6 6"/>
    <path d="M200 120 L222 172 L278 176 L235 212 L249 266 L200 236 L151 266 L165 212 L122 176 L178 172 Z" fill="#fef3c7" fill-opacity="0.9"/>`, defs);
}

const files = [
  ['bg-aurora.jpg', aurora(), 'jpeg'],
  ['bg-sunset-waves.jpg', waves(), 'jpeg'],
  ['bg-mesh-dark.jpg', meshDark(), 'jpeg'],
  ['product-mug.png', mug(), 'png'],
  ['avatar-portrait.jpg', avatar(), 'jpeg'],
  ['logo-mark.png', logo(), 'png'],
  ['photo-mountains.jpg', mountains(), 'jpeg'],
  ['photo-city.jpg', city(), 'jpeg'],
  ['photo-beach.jpg', beach(), 'jpeg'],
  ['seal-gold.png', seal(), 'png'],
];

for (const [name, markup, format] of files) {
  const image = sharp(Buffer.from(markup));
  const encoded = format === 'png' ? image.png({ compressionLevel: 9, palette: false }) : image.jpeg({ quality: 84, mozjpeg: true });
  const info = await encoded.toFile(join(out, name));
  console.log(`${name} ${info.width}x${info.height} ${(info.size / 1024).toFixed(0)} KB`);
}
