import { assertEdit, assertTiming, type JsonValue } from '#libs/edit-spec';
import { FrameCompositor, frameIndexAt, IN_PLACE, placeLayer, yuv420Size, yuv709, type LayerPlacement, type VideoFrames } from './composite.js';
import { clipKey, type ClipInputs, type EditProps } from './props.js';

/**
 * The compositor of played frames (issue 33, composite.ts), pure: which decoded frame an output frame
 * shows, where the video goes, and the painting of a frame in the output's colours. Against Chromium's
 * own drawing: compose-render.spec.ts.
 */
const FPS = 12;

function props(clip: Record<string, JsonValue>, media: { width: number; height: number; duration?: number } = { width: 320, height: 180 }, size = { width: 320, height: 180 }): EditProps {
  const edit = assertEdit({ timeline: { tracks: [{ clips: [{ asset: { type: 'video', src: 'https://cdn.example.com/v.mp4' }, start: 0, length: 4, ...clip }] }] }, output: { format: 'mp4', size, fps: FPS } });
  const timing = assertTiming(edit);
  const clips: Record<string, ClipInputs> = { [clipKey(0, 0)]: { source: { width: media.width, height: media.height }, media: { url: 'http://127.0.0.1/v.mp4', kind: 'video', ...media } } };
  return { timing, clips, fps: FPS, windowStart: 0, viewport: size, width: size.width, height: size.height, still: false, background: '#000000', durationInFrames: 48, muted: false } as unknown as EditProps;
}

/** 24 frames a second for 5 s. */
const video: VideoFrames = { width: 320, height: 180, times: Array.from({ length: 120 }, (_, i) => i / 24), start: 0 };

describe('frameIndexAt: the frame @remotion/media shows at a time (the last at or before it)', () => {
  it('picks the frame whose time is at or before t, the first before them all, the last after', () => {
    const times = [0, 0.04, 0.08, 0.12];
    expect([frameIndexAt(times, 0), frameIndexAt(times, 0.039), frameIndexAt(times, 0.04), frameIndexAt(times, 0.1), frameIndexAt(times, 5)]).toEqual([0, 0, 1, 2, 3]);
    expect(frameIndexAt([0.05, 0.1], 0)).toBe(0);
  });

  it('a frame up to a millisecond after t is shown at t: a 29.97 fps file in a 30 fps output shows frame k at k/30 s', () => {
    const ntsc = Array.from({ length: 120 }, (_, i) => (i * 1001) / 30000);
    expect(Array.from({ length: 30 }, (_, k) => frameIndexAt(ntsc, k / 30))).toEqual(Array.from({ length: 30 }, (_, k) => k));
    // 1.5 ms after: the frame before.
    expect(frameIndexAt([0, 0.0345], 0.033)).toBe(0);
  });
});

describe('placeLayer: where an output frame shows the video (the composition\'s own geometry)', () => {
  it('a full-frame clip: one source pixel per output pixel, frame 2k of a 24 fps file at output frame k', () => {
    const at = placeLayer(props({}), '0:0', 5, video)!;
    expect(at).toMatchObject({ frame: 10, sx: 1, sy: 1, tx: 0, ty: 0, opacity: 1 });
    expect(at.clip).toEqual({ left: 0, top: 0, right: 320, bottom: 180 });
  });

  it('trim and speed pick frames by time: trim 0.5 s at 1.5× shows t = 0.5 + k/12 × 1.5', () => {
    const p = props({ asset: { type: 'video', src: 'https://cdn.example.com/v.mp4', trim: 0.5, speed: 1.5 } });
    expect([0, 1, 4].map((k) => placeLayer(p, '0:0', k, video)!.frame)).toEqual([12, 15, 24]);
  });

  it('a zoom scales about the centre; the output size scales the viewport', () => {
    const zoomed = placeLayer(props({ effect: 'zoomIn' }), '0:0', 47, video)!;
    expect(zoomed.sx).toBeGreaterThan(1.2);
    expect(zoomed.tx).toBeCloseTo(160 - 160 * zoomed.sx, 6);
    const half = placeLayer(props({}, { width: 640, height: 360 }), '0:0', 0, { ...video, width: 640, height: 360 })!;
    expect(half).toMatchObject({ sx: 0.5, sy: 0.5, tx: 0, ty: 0 });
  });

  it('a clip placed on the left at half size is clipped to its box; its opacity is carried', () => {
    const at = placeLayer(props({ scale: 0.5, position: 'left', opacity: 0.5 }), '0:0', 0, video)!;
    expect(at).toMatchObject({ sx: 0.5, sy: 0.5, opacity: 0.5 });
    expect(at.clip).toEqual({ left: 0, top: 45, right: 160, bottom: 135 });
  });

  it('counts the file\'s time from the clip\'s own first frame: a clip starting at 1 s shows the file\'s first frame at output frame 12', () => {
    const p = props({ start: 1, length: 3 });
    expect([12, 13, 18].map((k) => placeLayer(p, '0:0', k, video)!.frame)).toEqual([0, 2, 12]);
  });

  it('shows nothing past the file\'s playable frames or outside the clip', () => {
    const p = props({}, { width: 320, height: 180, duration: 2 });
    expect(placeLayer(p, '0:0', 23, video)).toBeDefined();
    expect(placeLayer(p, '0:0', 24, video)).toBeUndefined();
    expect(placeLayer(props({ start: 1, length: 3 }), '0:0', 11, video)).toBeUndefined();
  });
});

describe('FrameCompositor: a frame in limited-range BT.709 yuv420p', () => {
  const W = 8;
  const H = 4;
  /** A yuv420p picture of one colour. */
  const flat = (w: number, h: number, [y, u, v]: [number, number, number]) => {
    const b = Buffer.alloc(yuv420Size(w, h));
    b.fill(y, 0, w * h);
    b.fill(u, w * h, w * h + (w / 2) * (h / 2));
    b.fill(v, w * h + (w / 2) * (h / 2));
    return b;
  };
  const whole: LayerPlacement = { frame: 0, sx: 1, sy: 1, tx: 0, ty: 0, clip: { left: 0, top: 0, right: W, bottom: H }, opacity: 1 };
  const rgba = (pixel: [number, number, number, number], where: (x: number, y: number) => boolean) => {
    const b = Buffer.alloc(W * H * 4);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (where(x, y)) b.set(pixel, (y * W + x) * 4);
    return b;
  };

  it('BT.709 limited range: white 235/128/128, black 16/128/128, pure red as the matrix says', () => {
    expect(yuv709(255, 255, 255).map(Math.round)).toEqual([235, 128, 128]);
    expect(yuv709(0, 0, 0).map(Math.round)).toEqual([16, 128, 128]);
    expect(yuv709(255, 0, 0).map(Math.round)).toEqual([63, 102, 240]);
  });

  it('a video of the frame\'s size at scale 1 comes through unchanged, plane by plane', () => {
    const src = Buffer.from(Array.from({ length: yuv420Size(W, H) }, (_, i) => (i * 37) % 256));
    expect(Buffer.from(new FrameCompositor(W, H, '#000000').compose(src, { width: W, height: H }, whole))).toEqual(src);
  });

  it('no video: the background; a half-opaque video: halfway between it and the background', () => {
    const c = new FrameCompositor(W, H, '#ffffff');
    expect(Buffer.from(c.compose(undefined, { width: W, height: H }, undefined))).toEqual(flat(W, H, [235, 128, 128]));
    const half = c.compose(flat(W, H, [16, 128, 128]), { width: W, height: H }, { ...whole, opacity: 0.5 });
    expect([half[0], half[W * H]]).toEqual([126, 128]);
  });

  it('at scale 1 a whole-pixel offset copies the rows (the background where the video is not); half a pixel blends neighbours', () => {
    const src = Buffer.from(Array.from({ length: yuv420Size(W, H) }, (_, i) => 20 + (i % W) * 10));
    const c = new FrameCompositor(W, H, '#000000');
    const moved = c.compose(src, { width: W, height: H }, { ...whole, tx: 2, clip: { left: 2, top: 0, right: W + 2, bottom: H } });
    expect([...moved.subarray(W, 2 * W)]).toEqual([16, 16, 20, 30, 40, 50, 60, 70]);
    const half = c.compose(src, { width: W, height: H }, { ...whole, tx: 0.5, clip: { left: 0.5, top: 0, right: W + 0.5, bottom: H } });
    // Column 0 half covered over black (16), the others halfway between two source columns.
    expect([...half.subarray(W, W + 4)]).toEqual([18, 25, 35, 45]);
  });

  it('a scaled video is sampled bilinearly: a 2×2 source (black | white columns) stretched over the frame ramps across', () => {
    const out = new FrameCompositor(W, 2, '#000000').compose(Buffer.concat([Buffer.from([16, 235, 16, 235]), Buffer.from([128, 128])]), { width: 2, height: 2 }, { frame: 0, sx: W / 2, sy: 1, tx: 0, ty: 0, clip: { left: 0, top: 0, right: W, bottom: 2 }, opacity: 1 });
    const row = [...out.subarray(0, W)];
    // Output centres 0.5…7.5 are source positions −0.375…1.375: clamped at the ends, a linear ramp between.
    expect(row).toEqual([16, 16, 43, 98, 153, 208, 235, 235]);
  });

  it('the picture over the video: opaque pixels replace it, half-transparent ones blend, transparent ones leave it', () => {
    const c = new FrameCompositor(W, H, '#000000');
    c.setOverlays([{ rgba: Buffer.concat([rgba([255, 255, 255, 255], (x) => x < 2).subarray(0, W * H * 4)]) }]);
    const out = c.compose(flat(W, H, [16, 128, 128]), { width: W, height: H }, whole);
    expect([out[0], out[1], out[2], out[W + 7]]).toEqual([235, 235, 16, 16]);
    c.setOverlays([{ rgba: rgba([255, 255, 255, 128], () => true) }]);
    expect(c.compose(flat(W, H, [16, 128, 128]), { width: W, height: H }, whole)[0]).toBe(126);
    c.setOverlays([]);
    expect(c.compose(flat(W, H, [16, 128, 128]), { width: W, height: H }, whole)[0]).toBe(16);
  });

  it('pictures over the video, bottom first, each faded and moved by its place: the same frame as the picture drawn there', () => {
    // A red square (2×2 at 1,1) with a soft edge pixel: moved by (3, 1), an odd offset that straddles
    // the chroma blocks, and at opacity 0.6, over a green square that holds still.
    const square = (x0: number, y0: number) => {
      const b = Buffer.alloc(W * H * 4);
      for (let y = y0; y < y0 + 2; y++) for (let x = x0; x < x0 + 2; x++) b.set([230, 30, 40, 255], (y * W + x) * 4);
      b.set([230, 30, 40, 128], (y0 * W + x0 + 2) * 4);
      return b;
    };
    const green = rgba([20, 200, 60, 255], (x, y) => x >= 4 && y >= 2);
    const under = flat(W, H, [90, 110, 150]);
    const moved = new FrameCompositor(W, H, '#000000');
    moved.setOverlays([{ rgba: green }, { rgba: square(1, 1), moves: true }]);
    const there = new FrameCompositor(W, H, '#000000');
    const faded = square(4, 2);
    for (let i = 3; i < faded.length; i += 4) faded[i] = Math.round(faded[i]! * 0.6);
    there.setOverlays([{ rgba: green }, { rgba: faded }]);
    const a = Buffer.from(moved.compose(under, { width: W, height: H }, whole, [{ opacity: 1, dx: 0, dy: 0 }, { opacity: 0.6, dx: 3, dy: 1 }]));
    const b = Buffer.from(there.compose(under, { width: W, height: H }, whole));
    expect(Math.max(...[...a].map((v, i) => Math.abs(v - b[i]!)))).toBeLessThanOrEqual(1);
    // The square did move: set in place it makes another frame.
    const still = new FrameCompositor(W, H, '#000000');
    still.setOverlays([{ rgba: green }, { rgba: square(1, 1) }]);
    expect(Buffer.from(still.compose(under, { width: W, height: H }, whole))).not.toEqual(a);
    // Every offset, odd or even, partly off the frame too: the picture shifted by hand and set in place.
    const shifted = (src: Buffer, dx: number, dy: number) => {
      const b = Buffer.alloc(W * H * 4);
      for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (x - dx >= 0 && x - dx < W && y - dy >= 0 && y - dy < H) src.copy(b, (y * W + x) * 4, ((y - dy) * W + x - dx) * 4, ((y - dy) * W + x - dx) * 4 + 4);
      return b;
    };
    for (const [dx, dy] of [[-2, -1], [1, -1], [5, 3], [-1, 2], [6, 0]] as const) {
      const got = Buffer.from(moved.compose(under, { width: W, height: H }, whole, [IN_PLACE, { opacity: 1, dx, dy }]));
      there.setOverlays([{ rgba: green }, { rgba: shifted(square(1, 1), dx, dy) }]);
      const want = Buffer.from(there.compose(under, { width: W, height: H }, whole));
      expect({ dx, dy, most: Math.max(...[...got].map((v, i) => Math.abs(v - want[i]!))) <= 1 }).toEqual({ dx, dy, most: true });
    }
    // An even offset (the chroma blocks' own) is exact, and a picture moved off the frame leaves nothing.
    const even = Buffer.from(moved.compose(under, { width: W, height: H }, whole, [IN_PLACE, { opacity: 1, dx: 2, dy: 0 }]));
    there.setOverlays([{ rgba: green }, { rgba: square(3, 1) }]);
    expect(even).toEqual(Buffer.from(there.compose(under, { width: W, height: H }, whole)));
    const off = Buffer.from(moved.compose(under, { width: W, height: H }, whole, [IN_PLACE, { opacity: 1, dx: -3, dy: -3 }]));
    there.setOverlays([{ rgba: green }]);
    expect(off).toEqual(Buffer.from(there.compose(under, { width: W, height: H }, whole)));
    // Opacity 0 leaves the frame as it is without the picture.
    expect(Buffer.from(moved.compose(under, { width: W, height: H }, whole, [IN_PLACE, { opacity: 0, dx: 1, dy: 1 }]))).toEqual(off);
  });
});
