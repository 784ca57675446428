import { clipVisualAt } from './frame.js';
import type { Clip } from './model.js';

const viewport = { width: 1280, height: 720 };
const source = { width: 1280, height: 720 };

function clip(extra: Partial<Clip> = {}): Clip {
  return {
    asset: { type: 'image', src: 'https://cdn.example.com/a.jpg' },
    start: 0,
    length: 10,
    fit: 'crop',
    scale: 1,
    position: 'center',
    offset: { x: 0, y: 0 },
    opacity: 1,
    ...extra,
  };
}

describe('clipVisualAt', () => {
  it('applies a zoom effect about the centre of the placed clip', () => {
    const v = clipVisualAt(clip({ effect: 'zoomIn' }), 5, 10, { viewport, source });
    expect(v.box.width).toBeCloseTo(1280 * 1.15);
    expect(v.box.x + v.box.width / 2).toBeCloseTo(640);
    expect(v.crop).toEqual({ x: 0, y: 0, width: 1280, height: 720 });
  });

  it('combines keyframed opacity with a fade and adds offsets, rotation, skew and flip', () => {
    const v = clipVisualAt(
      clip({
        opacity: [{ from: 0.5, to: 0.5, start: 0, length: 10 }],
        transition: { in: 'fade' },
        offset: { x: 0.1, y: 0 },
        scale: 0.5,
        transform: { rotate: { angle: [{ from: 0, to: 90, start: 0, length: 10 }] }, skew: { x: 10, y: 0 }, flip: { horizontal: true, vertical: false } },
        filter: 'greyscale',
      }),
      0.5,
      10,
      { viewport, source },
    );
    expect(v.opacity).toBeCloseTo(0.25);
    expect(v.box).toEqual({ x: 320 + 128, y: 180, width: 640, height: 360 });
    expect(v.rotate).toBeCloseTo(4.5);
    expect(v.skew).toEqual({ x: 10, y: 0 });
    expect(v.flip).toEqual({ horizontal: true, vertical: false });
    expect(v.filter).toBe('greyscale');
  });

  it('shows stills at rest: no effect and no transition', () => {
    const v = clipVisualAt(clip({ effect: 'zoomInFast', transition: { in: 'fade' } }), 0, 10, { viewport, source, still: true });
    expect(v.opacity).toBe(1);
    expect(v.box).toEqual({ x: 0, y: 0, width: 1280, height: 720 });
  });
});
