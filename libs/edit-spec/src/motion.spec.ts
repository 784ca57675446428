import { cubicBezier, ease } from './easing.js';
import { EASINGS, type Tween } from './model.js';
import { effectTransform, transitionDuration, transitionState, transitionWindows, valueAt } from './motion.js';

const close = (value: number, expected: number) => expect(value).toBeCloseTo(expected, 4);

describe('easing curves', () => {
  it('match the CSS cubic-bézier values at known points', () => {
    close(ease('ease', 0.5), 0.8024);
    close(ease('easeIn', 0.5), 0.3154);
    close(ease('easeOut', 0.5), 0.6846);
    close(ease('easeInOut', 0.5), 0.5);
    close(ease('easeInOut', 0.25), 0.1292);
    close(ease('easeInOut', 0.75), 0.8708);
    close(cubicBezier([0, 0, 1, 1], 0.3), 0.3);
  });

  it('start at 0 and end at 1 for every Shotstack easing, and Back overshoots', () => {
    for (const name of EASINGS) {
      expect([ease(name, 0), ease(name, 1)]).toEqual([0, 1]);
    }
    expect(ease('easeOutBack', 0.5)).toBeGreaterThan(1);
    expect(ease('easeInBack', 0.25)).toBeLessThan(0);
  });
});

describe('valueAt', () => {
  const fadeIn: Tween = { from: 0, to: 1, start: 1, length: 2 };

  it('returns constants as they are', () => {
    expect(valueAt(0.4, 12)).toBe(0.4);
  });

  it('interpolates linearly by default, holding from before and to after the tween', () => {
    expect([0, 1, 2, 2.5, 3, 9].map((t) => valueAt([fadeIn], t))).toEqual([0, 0, 0.5, 0.75, 1, 1]);
  });

  it('eases bezier tweens (ease when no easing is named)', () => {
    close(valueAt([{ ...fadeIn, interpolation: 'bezier' }], 2), 0.8024);
    close(valueAt([{ ...fadeIn, interpolation: 'bezier', easing: 'easeIn' }], 2), 0.3154);
    close(valueAt([{ ...fadeIn, easing: 'easeOut' }], 2), 0.6846);
  });

  it('jumps at the end of a constant tween', () => {
    expect([1, 2.99, 3].map((t) => valueAt([{ ...fadeIn, interpolation: 'constant' }], t))).toEqual([0, 0, 1]);
  });

  it('chains segments: between them the last one that started holds its end value', () => {
    const keyframes: Tween[] = [
      { from: 0, to: 1, start: 0, length: 1 },
      { from: 1, to: 0.5, start: 2, length: 1 },
    ];
    expect([0.5, 1.5, 2.5, 4].map((t) => valueAt(keyframes, t))).toEqual([0.5, 1, 0.75, 0.5]);
  });
});

describe('effectTransform', () => {
  it('zooms in from 1 to 1.3 over the clip (1.1 Slow, 1.7 Fast), and out the other way', () => {
    expect(effectTransform('zoomIn', 0)).toEqual({ scale: 1, offsetX: 0, offsetY: 0 });
    close(effectTransform('zoomIn', 0.5).scale, 1.15);
    close(effectTransform('zoomInSlow', 1).scale, 1.1);
    close(effectTransform('zoomInFast', 1).scale, 1.7);
    close(effectTransform('zoomOut', 0).scale, 1.3);
    close(effectTransform('zoomOut', 1).scale, 1);
  });

  it('pans the enlarged content in the named direction (x right, y up)', () => {
    const left = [0, 0.5, 1].map((p) => effectTransform('slideLeft', p));
    expect(left.map((m) => Math.round(m.offsetX * 1000) / 1000)).toEqual([0.12, 0, -0.12]);
    close(left[0]?.scale ?? 0, 1.24);
    close(effectTransform('slideRight', 0).offsetX, -0.12);
    close(effectTransform('slideUp', 1).offsetY, 0.12);
    close(effectTransform('slideDownFast', 1).offsetY, -0.2);
    close(effectTransform('slideUpSlow', 0).offsetY, -0.03);
  });

  it('is the identity without an effect', () => {
    expect(effectTransform(undefined, 0.5)).toEqual({ scale: 1, offsetX: 0, offsetY: 0 });
  });
});

describe('transitions', () => {
  it('last 1 s (fade, reveal, wipe, shuffle), 0.5 s (slide, carousel) or 0.4 s (zoom); Slow 2 s, Fast half', () => {
    expect(['fade', 'fadeSlow', 'fadeFast', 'wipeLeft', 'shuffleTopLeftFast', 'slideUp', 'slideUpFast', 'carouselLeftSlow', 'zoom', 'none'].map(
      (n) => transitionDuration(n as Parameters<typeof transitionDuration>[0]),
    )).toEqual([1, 2, 0.5, 1, 0.5, 0.5, 0.25, 2, 0.4, 0]);
  });

  it('shrink in proportion when in + out would outlast the clip', () => {
    expect(transitionWindows({ in: 'fadeSlow', out: 'fade' }, 1.5)).toEqual({ in: 1, out: 0.5 });
    expect(transitionWindows({ in: 'fade' }, 4)).toEqual({ in: 1, out: 0 });
  });

  it('fade in over the start and out over the end, eased in and out', () => {
    const t = { in: 'fade', out: 'fade' } as const;
    expect(transitionState(t, 0, 10).opacity).toBe(0);
    close(transitionState(t, 0.5, 10).opacity, 0.5);
    close(transitionState(t, 0.25, 10).opacity, 0.1292);
    expect(transitionState(t, 5, 10).opacity).toBe(1);
    close(transitionState(t, 9.5, 10).opacity, 0.5);
    expect(transitionState(t, 10, 10).opacity).toBe(0);
  });

  it('carousel in from the side it names and out to the other', () => {
    expect(transitionState({ in: 'carouselLeft' }, 0, 5).offsetX).toBe(1);
    expect(transitionState({ in: 'carouselLeft' }, 0.5, 5).offsetX).toBe(0);
    expect(transitionState({ out: 'carouselLeft' }, 5, 5).offsetX).toBe(-1);
    expect(transitionState({ in: 'carouselUp' }, 0, 5).offsetY).toBe(-1);
  });

  it('slide moves slightly while fading', () => {
    expect(transitionState({ in: 'slideRight' }, 0, 5)).toMatchObject({ opacity: 0, offsetX: -0.025 });
    expect(transitionState({ out: 'slideUp' }, 5, 5)).toMatchObject({ opacity: 0, offsetY: 0.025 });
  });

  it('reveal and wipe hide part of the box; wipes have a soft edge', () => {
    close(transitionState({ in: 'reveal' }, 0.5, 5).clip.right, 0.5);
    expect(transitionState({ in: 'reveal' }, 0.5, 5).clip.feather).toBe(0);
    close(transitionState({ in: 'wipeLeft' }, 0.5, 5).clip.left, 0.5);
    close(transitionState({ out: 'wipeRight' }, 4.5, 5).clip.left, 0.5);
    expect(transitionState({ in: 'wipeRight' }, 0, 5).clip).toEqual({ top: 0, right: 1, bottom: 0, left: 0, feather: 0.1 });
  });

  it('zoom scales from 10× to rest while fading in', () => {
    expect(transitionState({ in: 'zoom' }, 0, 5)).toMatchObject({ scale: 10, opacity: 0 });
    expect(transitionState({ in: 'zoom' }, 0.4, 5)).toMatchObject({ scale: 1, opacity: 1 });
  });

  it('shuffle flies in from its corner, turning', () => {
    expect(transitionState({ in: 'shuffleTopRight' }, 0, 5)).toMatchObject({ offsetX: 0.5, offsetY: 1, rotate: 20 });
    expect(transitionState({ in: 'shuffleLeftBottom' }, 0, 5)).toMatchObject({ offsetX: -1, offsetY: -0.5, rotate: -20 });
  });
});
