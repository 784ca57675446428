import { readFile } from 'node:fs/promises';
import { seededRandom as random } from '#testing/video';
import { BilinearRows } from './bilinear.js';
import { FrameCompositor, yuv420Size, type LayerPlacement } from './composite.js';

/**
 * The compositor's bilinear sampling of a placed video (issue 33, footage: bilinear.wat, the
 * WebAssembly kernels behind composite.ts paintPlane). What a user would notice if it were wrong:
 * the composed frames would drift from the page's (compose-render.spec.ts) or a stale build would
 * ship. So: the shipped bytes are the .wat's, and every output sample equals the per-pixel
 * definition (two taps across, two down, weights in 256ths, rounded; partial coverage and opacity
 * blended) bit for bit, for scales, offsets, clips and sizes that exercise every path.
 */

const coverage = (i: number, a: number, b: number) => Math.max(0, Math.min(i + 1, b) - Math.max(i, a));

/** A picture of random samples. */
function noise(bytes: number, rnd: () => number): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = rnd() * 256;
  return b;
}

/** The definition, sample by sample: what composite.ts computes with its row caches and kernels. */
function reference(W: number, H: number, background: [number, number, number], src: Buffer, sw: number, sh: number, at: LayerPlacement): Buffer {
  const cw = W / 2;
  const ch = H / 2;
  const out = Buffer.alloc(yuv420Size(W, H));
  out.fill(background[0], 0, W * H);
  out.fill(background[1], W * H, W * H + cw * ch);
  out.fill(background[2], W * H + cw * ch);
  const scw = Math.ceil(sw / 2);
  const sch = Math.ceil(sh / 2);
  const planes = [
    { base: 0, w: W, h: H, srcBase: 0, pw: sw, ph: sh, sub: 1 },
    { base: W * H, w: cw, h: ch, srcBase: sw * sh, pw: scw, ph: sch, sub: 2 },
    { base: W * H + cw * ch, w: cw, h: ch, srcBase: sw * sh + scw * sch, pw: scw, ph: sch, sub: 2 },
  ];
  for (const p of planes) {
    const [left, right, top, bottom] = [at.clip.left / p.sub, at.clip.right / p.sub, at.clip.top / p.sub, at.clip.bottom / p.sub];
    // Each column's and row's two taps, weight and coverage (the sample centre mapped to the source).
    const taps = (count: number, n: number, t: number, s: number, a: number, b: number) => Array.from({ length: count }, (_, c) => {
      const u = ((c + 0.5) * p.sub - t) / s / p.sub - 0.5;
      const f = Math.floor(u);
      return [Math.min(n - 1, Math.max(0, f)), Math.min(n - 1, Math.max(0, f + 1)), Math.round((u - f) * 256), coverage(c, a, b)] as const;
    });
    const cols = taps(p.w, p.pw, at.tx, at.sx, left, right);
    const rows = taps(p.h, p.ph, at.ty, at.sy, top, bottom);
    for (let y = 0; y < p.h; y++) {
      const [r0, r1, wy, covY] = rows[y]!;
      for (let x = 0; x < p.w; x++) {
        const [c0, c1, wx, covX] = cols[x]!;
        const alpha = covX * at.opacity * covY;
        if (alpha <= 0) continue;
        const across = (r: number) => src[p.srcBase + r * p.pw + c0]! * (256 - wx) + src[p.srcBase + r * p.pw + c1]! * wx;
        const value = (across(r0) * (256 - wy) + across(r1) * wy + 32768) >> 16;
        const i = p.base + y * p.w + x;
        out[i] = alpha >= 1 ? value : value * alpha + out[i]! * (1 - alpha) + 0.5;
      }
    }
  }
  return out;
}

describe('bilinear.wat: the shipped module is its source', () => {
  it('bilinear-wasm.ts holds exactly what scripts/build-wasm.mjs assembles from bilinear.wat', async () => {
    const { bilinearModuleSource } = await import('../../../scripts/build-wasm.mjs');
    expect(await readFile(new URL('./bilinear-wasm.ts', import.meta.url), 'utf8')).toBe(await bilinearModuleSource());
  });
});

describe('BilinearRows.blend: a row laid over the frame as JavaScript\'s mix lays it, bit for bit', () => {
  it('over a frame of noise, any span of a row, at coverages and opacities from none through tiny to whole (and NaN: untouched)', () => {
    const rnd = random(11);
    const rows = new BilinearRows();
    const n = 300;
    rows.reserve(n, 64);
    const alphas = [0, -0, 1, 1 - 2 ** -53, 5e-324, 1e-12, Number.NaN, 1.5];
    for (let t = 0; t < 200; t++) {
      // The row to lay: the two filtered rows (one source row of noise across, weights 0) mixed.
      for (let k = 0; k < n; k++) {
        rows.x0[k] = k % 64;
        rows.x1[k] = k % 64;
        rows.wx[k] = 0;
        rows.cov[k] = t % 4 === 0 ? alphas[k % alphas.length]! : rnd();
      }
      const source = noise(64, rnd);
      rows.across('upper', source, 0, 64);
      rows.across('lower', source, 0, 64);
      const values = Buffer.from(rows.vertical(256, 0));
      expect([...values.subarray(0, 64)]).toEqual([...source]);
      const out = noise(1000, rnd);
      const want = Buffer.from(out);
      const start = Math.floor(rnd() * 600);
      const from = Math.floor(rnd() * n);
      const to = from + Math.floor(rnd() * (n - from + 1));
      const covY = t % 5 === 0 ? 1 : rnd();
      for (let k = from; k < to; k++) {
        const alpha = rows.cov[k]! * covY;
        const i = start + k;
        if (alpha >= 1) want[i] = values[k]!;
        else if (alpha > 0) want[i] = values[k]! * alpha + want[i]! * (1 - alpha) + 0.5;
      }
      rows.blend(out, start, covY, from, to);
      expect(out.equals(want)).toBe(true);
    }
  });
});

describe('FrameCompositor: a placed video sampled as the definition says, bit for bit', () => {
  const bg: [number, number, number] = [16, 128, 128];

  /** The compositor's frame against the definition's, named by the first sample that differs. */
  function check(compositor: FrameCompositor, src: Buffer, sw: number, sh: number, at: LayerPlacement, label: string): void {
    const got = Buffer.from(compositor.compose(src, { width: sw, height: sh }, at));
    const want = reference(compositor.width, compositor.height, bg, src, sw, sh, at);
    if (!got.equals(want)) {
      const i = got.findIndex((b, k) => b !== want[k]);
      throw new Error(`${label} ${JSON.stringify({ sw, sh, at })}: sample ${i} is ${got[i]}, the definition says ${want[i]}`);
    }
  }

  it('200 placements in one compositor: zoomed in and out, moved by fractions or whole pixels, clipped partly, faded, of odd and growing source sizes', () => {
    const rnd = random(33);
    const compositor = new FrameCompositor(96, 54, '#000000');
    for (let n = 0; n < 200; n++) {
      // Source sizes vary (odd ones too: chroma of ⌈w/2⌉); every 25th is far larger, so the sampler's
      // memory grows between frames and the next, small, frame is sampled in the grown memory.
      const big = n % 25 === 12;
      const sw = big ? 400 + Math.floor(rnd() * 400) : 8 + Math.floor(rnd() * 150);
      const sh = big ? 300 + Math.floor(rnd() * 200) : 6 + Math.floor(rnd() * 90);
      const src = noise(yuv420Size(sw, sh), rnd);
      // Every 10th at scale 1 and an even whole offset: rows copied as they are, luma and chroma alike.
      const still = n % 10 === 0;
      const scale = still ? 1 : 0.3 + rnd() * 3;
      const sx = scale;
      const sy = n % 7 === 0 ? scale * (0.5 + rnd()) : scale;
      const tx = still ? 2 * Math.round(rnd() * 10 - 5) : rnd() * 60 - 30;
      const ty = still ? 2 * Math.round(rnd() * 6 - 3) : rnd() * 40 - 20;
      const left = Math.max(tx, rnd() * 30 - 5);
      const top = Math.max(ty, rnd() * 20 - 5);
      const clip = { left, top, right: Math.min(tx + sw * sx, left + rnd() * 120), bottom: Math.min(ty + sh * sy, top + rnd() * 70) };
      check(compositor, src, sw, sh, { frame: 0, sx, sy, tx, ty, clip, opacity: n % 3 === 0 ? 0.2 + rnd() * 0.8 : 1 }, `placement ${n}`);
    }
  });

  it('the decoder\'s one buffer refilled between frames: each frame is sampled from what it holds then', () => {
    const rnd = random(5);
    const compositor = new FrameCompositor(96, 54, '#000000');
    const frame = Buffer.alloc(yuv420Size(64, 36));
    const at: LayerPlacement = { frame: 0, sx: 1.3, sy: 1.3, tx: -3.2, ty: 1.7, clip: { left: 0, top: 1.7, right: 80, bottom: 48.5 }, opacity: 1 };
    for (let k = 0; k < 3; k++) {
      frame.set(noise(frame.length, rnd));
      check(compositor, frame, 64, 36, at, `frame ${k}`);
    }
  });

  it('a 720p frame zoomed 1.05× about its centre (the footage bench\'s move), whole and faded, equals the definition', () => {
    const W = 1280;
    const H = 720;
    const src = noise(yuv420Size(W, H), random(7));
    const s = 1.05;
    const at: LayerPlacement = { frame: 0, sx: s, sy: s, tx: (W - W * s) / 2, ty: (H - H * s) / 2, clip: { left: 0, top: 0, right: W, bottom: H }, opacity: 1 };
    const compositor = new FrameCompositor(W, H, '#000000');
    check(compositor, src, W, H, at, 'whole');
    check(compositor, src, W, H, { ...at, opacity: 0.4 }, 'faded');
  });
});
