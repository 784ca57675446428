import { outputFps, outputKind, outputSize, pdfPageLayout, presetSize } from './geometry.js';
import type { AspectRatio, Output, Resolution } from './model.js';

describe('presetSize: every resolution preset in every aspect ratio', () => {
  const table: Record<Resolution, Record<AspectRatio, string>> = {
    preview: { '16:9': '512x288', '9:16': '288x512', '1:1': '288x288', '4:5': '288x360', '4:3': '384x288' },
    mobile: { '16:9': '640x360', '9:16': '360x640', '1:1': '360x360', '4:5': '360x450', '4:3': '480x360' },
    sd: { '16:9': '1024x576', '9:16': '576x1024', '1:1': '576x576', '4:5': '576x720', '4:3': '768x576' },
    hd: { '16:9': '1280x720', '9:16': '720x1280', '1:1': '720x720', '4:5': '720x900', '4:3': '960x720' },
    fhd: { '16:9': '1920x1080', '9:16': '1080x1920', '1:1': '1080x1080', '4:5': '1080x1350', '4:3': '1440x1080' },
    '4k': { '16:9': '3840x2160', '9:16': '2160x3840', '1:1': '2160x2160', '4:5': '2160x2700', '4:3': '2880x2160' },
  };
  for (const [resolution, ratios] of Object.entries(table) as [Resolution, Record<AspectRatio, string>][]) {
    for (const [ratio, expected] of Object.entries(ratios) as [AspectRatio, string][]) {
      it(`${resolution} at ${ratio} is ${expected}`, () => {
        const { width, height } = presetSize(resolution, ratio);
        expect(`${width}x${height}`).toBe(expected);
      });
    }
  }
});

describe('outputSize', () => {
  const size = (output: Output, scale?: number) => {
    const s = outputSize(output, { scale });
    return `${s.width}x${s.height}`;
  };

  it('defaults to Shotstack sd at 16:9', () => {
    expect(size({ format: 'mp4' })).toBe('1024x576');
    expect(size({ format: 'png', aspectRatio: '1:1' })).toBe('576x576');
  });

  it('lets size override resolution and aspect ratio', () => {
    expect(size({ format: 'png', resolution: 'hd', aspectRatio: '9:16', size: { width: 1200, height: 628 } })).toBe('1200x628');
  });

  it('rescales the whole frame with scaleTo, keeping the viewport for layout', () => {
    const s = outputSize({ format: 'mp4', resolution: 'fhd', scaleTo: 'sd' });
    expect(s).toEqual({ width: 1024, height: 576, viewport: { width: 1920, height: 1080 }, pixelRatio: 576 / 1080 });
    expect(size({ format: 'mp4', resolution: 'hd', aspectRatio: '9:16', scaleTo: 'fhd' })).toBe('1080x1920');
  });

  it('multiplies stills by the device scale, clamped to 1..3, and ignores it for video', () => {
    expect(size({ format: 'png', resolution: 'hd' }, 2)).toBe('2560x1440');
    expect(size({ format: 'jpeg', resolution: 'hd' }, 5)).toBe('3840x2160');
    expect(size({ format: 'pdf', resolution: 'hd' }, 0)).toBe('1280x720');
    expect(size({ format: 'mp4', resolution: 'hd' }, 2)).toBe('1280x720');
  });

  it('rounds video formats to even dimensions, and stills to whole pixels', () => {
    expect(size({ format: 'mp4', size: { width: 1001, height: 599 } })).toBe('1002x600');
    expect(size({ format: 'gif', size: { width: 333, height: 333 } })).toBe('334x334');
    expect(size({ format: 'png', size: { width: 1001, height: 599 } })).toBe('1001x599');
    expect(size({ format: 'mp4', size: { width: 1000, height: 1000 }, scaleTo: 'preview' })).toBe('288x288');
  });
});

describe('output helpers', () => {
  it('default to 25 fps and tell stills from video', () => {
    expect(outputFps({ format: 'mp4' })).toBe(25);
    expect(outputFps({ format: 'mp4', fps: 29.97 })).toBe(29.97);
    expect((['png', 'jpeg', 'pdf', 'mp4', 'gif'] as const).map(outputKind)).toEqual(['image', 'image', 'image', 'video', 'video']);
  });
});

describe('pdfPageLayout (issue 21)', () => {
  it('makes the page the frame at 150 dpi by default: 1240×1754 px is A4, whatever the device scale', () => {
    const page = pdfPageLayout({ format: 'pdf', size: { width: 1240, height: 1754 } }, { width: 1240, height: 1754 });
    expect([page.width, page.height].map((n) => Math.round(n * 10) / 10)).toEqual([595.2, 841.9]);
    expect(page.frame).toEqual({ x: 0, y: 0, width: page.width, height: page.height });
    expect(pdfPageLayout({ format: 'pdf', pdf: { dpi: 72 } }, { width: 200, height: 100 })).toMatchObject({ width: 200, height: 100, pointsPerPx: 1 });
  });

  it('fits the frame into a fixed page, centred, the named sizes turning with a landscape frame', () => {
    const letter = pdfPageLayout({ format: 'pdf', pdf: { pageSize: 'Letter' } }, { width: 1000, height: 1000 });
    expect(letter).toEqual({ width: 612, height: 792, frame: { x: 0, y: 90, width: 612, height: 612 }, pointsPerPx: 0.612 });
    const a4 = pdfPageLayout({ format: 'pdf', pdf: { pageSize: 'A4' } }, { width: 1684, height: 1190 });
    expect([a4.width, a4.height, a4.frame.width, a4.frame.height]).toEqual([842, 595, 842, 595]);
    const own = pdfPageLayout({ format: 'pdf', pdf: { pageSize: { width: 300, height: 400 } } }, { width: 600, height: 400 });
    expect(own.frame).toEqual({ x: 0, y: 100, width: 300, height: 200 });
  });
});
