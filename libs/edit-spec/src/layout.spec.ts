import { clipBox, intrinsicSize, layoutClip, svgSize, type LayoutInput, type Rect } from './layout.js';
import type { Position } from './model.js';

const viewport = { width: 1280, height: 720 };
const square = { width: 1000, height: 1000 };

function rect(r: Rect): string {
  const n = (v: number) => Math.round(v * 1000) / 1000;
  return `${n(r.x)},${n(r.y)} ${n(r.width)}x${n(r.height)}`;
}

function place(input: Partial<LayoutInput>) {
  const p = layoutClip({ viewport, source: square, fit: 'crop', ...input });
  return { box: rect(p.box), content: rect(p.content), crop: rect(p.crop) };
}

describe('layoutClip: fit modes (1000×1000 source in a 1280×720 viewport)', () => {
  it('crop fills the viewport keeping the aspect ratio and cuts the overflow evenly', () => {
    expect(place({ fit: 'crop' })).toEqual({ box: '0,0 1280x720', content: '0,0 1280x720', crop: '0,218.75 1000x562.5' });
  });

  it('cover stretches the whole source over the viewport', () => {
    expect(place({ fit: 'cover' })).toEqual({ box: '0,0 1280x720', content: '0,0 1280x720', crop: '0,0 1000x1000' });
  });

  it('contain fits the whole source, centred', () => {
    expect(place({ fit: 'contain' })).toEqual({ box: '280,0 720x720', content: '280,0 720x720', crop: '0,0 1000x1000' });
  });

  it('none keeps the source size, centred (overflowing the frame)', () => {
    expect(place({ fit: 'none' })).toEqual({ box: '140,-140 1000x1000', content: '140,-140 1000x1000', crop: '0,0 1000x1000' });
  });

  it('contain with a position moves the fitted asset, not the frame', () => {
    expect(place({ fit: 'contain', position: 'left' }).box).toBe('0,0 720x720');
  });
});

describe('layoutClip: positions (crop at scale 0.5 makes a 640×360 element)', () => {
  const expected: Record<Position, string> = {
    center: '320,180',
    top: '320,0',
    topRight: '640,0',
    right: '640,180',
    bottomRight: '640,360',
    bottom: '320,360',
    bottomLeft: '0,360',
    left: '0,180',
    topLeft: '0,0',
  };
  for (const [position, origin] of Object.entries(expected) as [Position, string][]) {
    it(`${position} puts the element at ${origin}`, () => {
      expect(place({ scale: 0.5, position }).box).toBe(`${origin} 640x360`);
    });
  }

  it('scales the crop window with the element, not the part of the source shown', () => {
    expect(place({ scale: 0.5 }).crop).toBe('0,218.75 1000x562.5');
  });
});

describe('layoutClip: offsets are fractions of the viewport, x right and y up', () => {
  it('moves right by x × width and up by y × height', () => {
    expect(place({ scale: 0.5, offset: { x: 0.25, y: 0.5 } }).box).toBe('640,-180 640x360');
    expect(place({ scale: 0.5, position: 'bottomLeft', offset: { x: -0.1, y: -0.1 } }).box).toBe('-128,432 640x360');
  });
});

describe('layoutClip: a clip box (clip width/height)', () => {
  const wide = { width: 800, height: 400 };

  it('is the element: the asset is fitted and centred inside it', () => {
    expect(place({ source: wide, box: { width: 400, height: 400 }, fit: 'contain', position: 'topLeft' })).toEqual({
      box: '0,0 400x400',
      content: '0,100 400x200',
      crop: '0,0 800x400',
    });
  });

  it('crops to the box with crop, and clips a larger source with none', () => {
    expect(place({ source: wide, box: { width: 400, height: 400 }, fit: 'crop', position: 'topLeft' })).toEqual({
      box: '0,0 400x400',
      content: '0,0 400x400',
      crop: '200,0 400x400',
    });
    expect(place({ source: wide, box: { width: 400, height: 400 }, fit: 'none', position: 'topLeft' })).toEqual({
      box: '0,0 400x400',
      content: '0,0 400x400',
      crop: '200,0 400x400',
    });
  });

  it('stretches into the box with cover', () => {
    expect(place({ source: wide, box: { width: 300, height: 600 }, fit: 'cover' })).toEqual({
      box: '490,60 300x600',
      content: '490,60 300x600',
      crop: '0,0 800x400',
    });
  });

  it('is only set when the clip gives a width or height', () => {
    expect(clipBox({}, viewport)).toBeUndefined();
    expect(clipBox({ width: 300 }, viewport)).toEqual({ width: 300, height: 720 });
  });
});

describe('intrinsic sizes', () => {
  it('reads SVG width/height, else its viewBox', () => {
    expect(svgSize('<svg xmlns="http://www.w3.org/2000/svg" width="120px" height="80"><rect/></svg>')).toEqual({ width: 120, height: 80 });
    expect(svgSize('<svg viewBox="0 0 1920 200"></svg>')).toEqual({ width: 1920, height: 200 });
    expect(svgSize('<svg width="100%" height="100%"></svg>')).toBeUndefined();
  });

  it('uses the probed size for media, the asset box for text/html, the clip box or viewport otherwise', () => {
    expect(intrinsicSize({ type: 'image', src: 'x' }, {}, viewport)).toBeUndefined();
    expect(intrinsicSize({ type: 'image', src: 'x' }, {}, viewport, { width: 10, height: 20 })).toEqual({ width: 10, height: 20 });
    expect(intrinsicSize({ type: 'html', html: '', css: '', width: 400, position: 'center' }, { height: 100 }, viewport)).toEqual({ width: 400, height: 100 });
    expect(intrinsicSize({ type: 'shape', shape: 'circle', circle: { radius: 5 } }, { width: 50 }, viewport)).toEqual(viewport);
    expect(intrinsicSize({ type: 'svg', src: '<svg width="10" height="20"></svg>' }, {}, viewport)).toEqual({ width: 10, height: 20 });
    expect(intrinsicSize({ type: 'audio', src: 'x', trim: 0, volume: 1, speed: 1, effect: 'none' }, {}, viewport)).toBeUndefined();
  });
});
