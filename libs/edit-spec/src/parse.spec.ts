import { ApiError } from '#libs/core';
import type { Clip, EditSpec, RichTextAsset } from './model.js';
import { assertEdit, parseEdit, type ParseResult } from './parse.js';

type Raw = Record<string, unknown>;

function image(extra: Raw = {}): Raw {
  return { asset: { type: 'image', src: 'https://cdn.example.com/a.jpg' }, start: 0, length: 5, ...extra };
}

function rawEdit(tracks: Raw[][], output: Raw = { format: 'mp4' }, timeline: Raw = {}): Raw {
  return { timeline: { ...timeline, tracks: tracks.map((clips) => ({ clips })) }, output };
}

function parsed(input: unknown): EditSpec {
  const result = parseEdit(input);
  if (!result.ok) throw new Error(`expected a valid edit, got ${JSON.stringify(result.errors)}`);
  return result.edit;
}

function errorsOf(input: unknown, opts = {}): Record<string, string[]> {
  const result: ParseResult = parseEdit(input, opts);
  if (result.ok) throw new Error('expected the edit to be refused');
  return result.errors;
}

function firstClip(edit: EditSpec): Clip {
  const clip = edit.timeline.tracks[0]?.clips[0];
  if (!clip) throw new Error('no clip');
  return clip;
}

function refusal(input: unknown): ApiError {
  try {
    assertEdit(input);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('parseEdit: normalisation', () => {
  it('fills Shotstack defaults on a minimal edit', () => {
    const edit = parsed(rawEdit([[image()]]));
    expect(edit.timeline.background).toBe('#000000');
    expect(edit.timeline.fonts).toEqual([]);
    expect(firstClip(edit)).toEqual({
      asset: { type: 'image', src: 'https://cdn.example.com/a.jpg' },
      start: 0,
      length: 5,
      fit: 'crop',
      scale: 1,
      position: 'center',
      offset: { x: 0, y: 0 },
      opacity: 1,
    });
  });

  it('defaults fit to crop for image/video/luma and to none for assets that size themselves', () => {
    const edit = parsed(rawEdit([[
      image(),
      { asset: { type: 'video', src: 'https://cdn.example.com/v.mp4' }, start: 5, length: 2 },
      { asset: { type: 'rich-text', text: 'Hi' }, start: 7, length: 1 },
      { asset: { type: 'html', html: '<p>Hi</p>' }, start: 8, length: 1 },
      { asset: { type: 'image', src: 'https://cdn.example.com/b.jpg' }, start: 9, length: 1, fit: 'contain' },
    ]]));
    expect(edit.timeline.tracks[0]?.clips.map((c) => c.fit)).toEqual(['crop', 'crop', 'none', 'none', 'contain']);
  });

  it('coerces numbers and booleans sent as strings, as real Shotstack payloads do', () => {
    const edit = parsed(rawEdit(
      [[image({ start: '1.5', length: '5', scale: ' 0.5 ', opacity: '0.8', offset: { x: '0.1', y: '-0.2' }, width: '400' })]],
      { format: 'mp4', fps: '25', mute: 'true', size: { width: '1280', height: '720' } },
    ));
    expect(firstClip(edit)).toMatchObject({ start: 1.5, length: 5, scale: 0.5, opacity: 0.8, offset: { x: 0.1, y: -0.2 }, width: 400 });
    expect(edit.output).toMatchObject({ fps: 25, mute: true, size: { width: 1280, height: 720 } });
  });

  it('normalises the house vocabulary: jpg → jpeg, 1080 → fhd (as a string or a number)', () => {
    expect(parsed(rawEdit([[image()]], { format: 'jpg', resolution: '1080' })).output).toEqual({ format: 'jpeg', resolution: 'fhd' });
    expect(parsed(rawEdit([[image()]], { format: 'png', resolution: 1080, scaleTo: 'fhd' })).output).toEqual({ format: 'png', resolution: 'fhd', scaleTo: 'fhd' });
  });

  it('accepts the legacy hyphenated positions of title and html assets', () => {
    const edit = parsed(rawEdit([[{ asset: { type: 'title', text: 'Hi', position: 'top-right' }, start: 0, length: 2 }]]));
    expect(firstClip(edit).asset).toEqual({ type: 'title', text: 'Hi', size: 'medium', position: 'topRight', offset: { x: 0, y: 0 } });
  });

  it('normalises rich-text: documented defaults, `alignment` alias, named weights, padding shorthand', () => {
    const edit = parsed(rawEdit([[{
      asset: { type: 'rich-text', text: 'Hi', font: { weight: 'bold' }, alignment: { horizontal: 'left' }, padding: 12 },
      start: 0,
      length: 2,
    }]]));
    const asset = firstClip(edit).asset as RichTextAsset;
    expect(asset.font).toEqual({ family: 'Open Sans', size: 24, weight: 700, color: '#ffffff', opacity: 1 });
    expect(asset.align).toEqual({ horizontal: 'left', vertical: 'middle' });
    expect(asset.padding).toEqual({ top: 12, right: 12, bottom: 12, left: 12 });
  });

  it('reads caption font aliases (name, fontSize) into family and size', () => {
    const edit = parsed(rawEdit([[{
      asset: { type: 'caption', src: 'https://cdn.example.com/subs.srt', font: { name: 'Inter', fontSize: 30 } },
      start: 0,
      length: 5,
    }]]));
    expect(firstClip(edit).asset).toMatchObject({ font: { family: 'Inter', size: 30 }, trim: 0, speed: 1 });
  });

  it('accepts keyframe arrays on opacity, offset, scale and rotation', () => {
    const fade = [{ from: 0, to: 1, start: 0, length: 1, interpolation: 'bezier', easing: 'easeIn' }];
    const edit = parsed(rawEdit([[image({ opacity: fade, scale: fade, offset: { x: fade }, transform: { rotate: { angle: fade } } })]]));
    expect(firstClip(edit)).toMatchObject({ opacity: fade, scale: fade, offset: { x: fade, y: 0 }, transform: { rotate: { angle: fade } } });
  });

  it('accepts Shotstack fields it does not use (destinations, disk, instance) without keeping them', () => {
    const edit = parsed({ ...rawEdit([[image()]], { format: 'mp4', destinations: [{ provider: 'shotstack', exclude: true }] }), disk: 'local', instance: 's1' });
    expect(edit.output).toEqual({ format: 'mp4' });
    expect(Object.keys(edit)).toEqual(['timeline', 'output']);
  });

  it('treats "none" as no filter and no effect', () => {
    const clip = firstClip(parsed(rawEdit([[image({ filter: 'none', effect: 'none' })]])));
    expect(clip.filter).toBeUndefined();
    expect(clip.effect).toBeUndefined();
  });

  it('applies the edit\'s own merge pairs before validating, keeping replacement types', () => {
    const input = {
      ...rawEdit([[{ asset: { type: 'rich-text', text: 'Hello {{ NAME }}' }, start: 0, length: '{{ LENGTH }}' }]]),
      merge: [{ find: 'NAME', replace: 'Jane' }, { find: 'LENGTH', replace: 4 }],
    };
    const result = parseEdit(input);
    expect(result.ok && firstClip(result.edit)).toMatchObject({ asset: { text: 'Hello Jane' }, length: 4 });
  });

  it('reports placeholders left without a value (they render as written)', () => {
    const result = parseEdit(rawEdit([[{ asset: { type: 'rich-text', text: 'Hi {{ NAME }}' }, start: 0, length: 1 }]]));
    expect(result.ok && result.unresolved).toEqual(['NAME']);
  });
});

describe('parseEdit: refusals with contract paths', () => {
  it('names the exact path of a bad clip length and the bad value', () => {
    const errors = errorsOf(rawEdit([[image(), image({ start: 5 }), image({ start: 10, length: -2 })]]));
    expect(errors).toEqual({ 'edit.timeline.tracks[0].clips[2].length': ['must be greater than 0, got -2'] });
  });

  it('explains which words a timing field accepts', () => {
    const errors = errorsOf(rawEdit([[image({ start: 'soon', length: 'forever' })]]));
    expect(errors['edit.timeline.tracks[0].clips[0].start']?.[0]).toBe('must be a number of seconds, "auto" or "alias://NAME", got "soon"');
    expect(errors['edit.timeline.tracks[0].clips[0].length']?.[0]).toBe('must be a number of seconds, "auto", "end" or "alias://NAME", got "forever"');
  });

  it('refuses unknown keys at every level, suggesting the near miss', () => {
    const input = rawEdit([[image({ postion: 'top', asset: { type: 'image', src: 'https://cdn.example.com/a.jpg', source: 'x' } })]], { format: 'mp4', fsp: 25 });
    const errors = errorsOf({ ...input, extra: true });
    expect(errors).toEqual({
      'edit.extra': ['unknown field "extra"'],
      'edit.timeline.tracks[0].clips[0].postion': ['unknown field "postion" (did you mean "position"?)'],
      'edit.timeline.tracks[0].clips[0].asset.source': ['unknown field "source"'],
      'edit.output.fsp': ['unknown field "fsp" (did you mean "fps"?)'],
    });
  });

  it('collects every failure in one answer', () => {
    const errors = errorsOf(rawEdit(
      [[image({ opacity: 2, position: 'middle' })], [{ asset: { type: 'video' }, start: -1, length: 2 }]],
      { format: 'webm', fps: 26, size: { width: 1280 } },
    ));
    expect(Object.keys(errors).sort()).toEqual([
      'edit.output.format',
      'edit.output.fps',
      'edit.output.size.height',
      'edit.timeline.tracks[0].clips[0].opacity',
      'edit.timeline.tracks[0].clips[0].position',
      'edit.timeline.tracks[1].clips[0].asset.src',
      'edit.timeline.tracks[1].clips[0].start',
    ]);
    expect(errors['edit.output.format']).toEqual(['must be one of png, jpeg, pdf, mp4, gif; got "webm"']);
    expect(errors['edit.output.fps']?.[0]).toMatch(/^must be one of 12, 15, 23.976, 24, 25, 29.97, 30, 48, 50, 59.94, 60; got 26/);
    expect(errors['edit.timeline.tracks[1].clips[0].asset.src']).toEqual(['is required']);
  });

  it('prefixes paths with the caller\'s root', () => {
    expect(Object.keys(errorsOf(rawEdit([[image({ length: 0 })]]), { root: 'template.edit' }))).toEqual(['template.edit.timeline.tracks[0].clips[0].length']);
  });

  it('names an unfilled merge placeholder where a number was needed', () => {
    const errors = errorsOf(rawEdit([[image({ length: '{{ LENGTH }}' })]]));
    expect(errors['edit.timeline.tracks[0].clips[0].length']?.[0]).toContain('"{{ LENGTH }}" (a merge placeholder with no value)');
  });

  it('refuses Shotstack asset types this service does not render, and unknown ones', () => {
    const errors = errorsOf(rawEdit([[{ asset: { type: 'html5', html: '' }, start: 0, length: 1 }, { asset: { type: 'gif' }, start: 1, length: 1 }]]));
    expect(errors['edit.timeline.tracks[0].clips[0].asset.type']?.[0]).toMatch(/^"html5" assets are not supported/);
    expect(errors['edit.timeline.tracks[0].clips[1].asset.type']?.[0]).toMatch(/^must be one of image, video, text, title, rich-text, html, shape, svg, audio, caption, luma; got "gif"/);
  });

  it('validates keyframes field by field', () => {
    const errors = errorsOf(rawEdit([[image({ opacity: [{ to: 1, start: 0, length: 1, easing: 'bouncy' }] })]]));
    expect(errors).toEqual({
      'edit.timeline.tracks[0].clips[0].opacity[0].from': ['is required'],
      'edit.timeline.tracks[0].clips[0].opacity[0].easing': [expect.stringMatching(/^must be one of ease, easeIn, easeOut, easeInOut, /)],
    });
  });

  it('requires the sub-object of the chosen shape', () => {
    const errors = errorsOf(rawEdit([[{ asset: { type: 'shape', shape: 'circle', rectangle: { width: 1, height: 1 } }, start: 0, length: 1 }]]));
    expect(errors).toEqual({ 'edit.timeline.tracks[0].clips[0].asset.circle': ['is required'] });
  });

  it('takes SVG as markup or an http(s) URL, nothing else', () => {
    const svg = (src: string) => rawEdit([[{ asset: { type: 'svg', src }, start: 0, length: 1 }]]);
    expect(parseEdit(svg('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>')).ok).toBe(true);
    expect(parseEdit(svg('https://cdn.example.com/logo.svg')).ok).toBe(true);
    expect(errorsOf(svg('circle'))['edit.timeline.tracks[0].clips[0].asset.src']?.[0]).toMatch(/^must be SVG markup/);
  });

  it('refuses a src that is not an http(s) URL', () => {
    const errors = errorsOf(rawEdit([[image({ asset: { type: 'image', src: 'file:///etc/passwd' } })]]));
    expect(errors['edit.timeline.tracks[0].clips[0].asset.src']).toEqual(['must be an http(s) URL, got "file:///etc/passwd"']);
  });

  it('takes asset ids (ast_…) as media sources only when asked to (template edits); never a caption file', () => {
    const id = 'ast_lib_photo_mountains';
    const media = rawEdit([
      [image({ asset: { type: 'image', src: id } })],
      [{ asset: { type: 'video', src: ` ${id} ` }, start: 0, length: 1 }],
      [{ asset: { type: 'audio', src: id }, start: 0, length: 1 }],
      [{ asset: { type: 'luma', src: id }, start: 0, length: 1 }],
      [{ asset: { type: 'svg', src: 'ast_01JD0000000000000000000000' }, start: 0, length: 1 }],
    ], { format: 'mp4' }, { fonts: [{ src: id }], soundtrack: { src: id } });
    const accepted = parseEdit(media, { assetIds: true });
    if (!accepted.ok) throw new Error(JSON.stringify(accepted.errors));
    expect(accepted.edit.timeline.tracks.map((t) => (t.clips[0]?.asset as { src: string }).src)).toEqual([id, id, id, id, 'ast_01JD0000000000000000000000']);
    expect([accepted.edit.timeline.fonts[0]?.src, accepted.edit.timeline.soundtrack?.src]).toEqual([id, id]);
    // A render's edit: ids were swapped for URLs before it is parsed, so one left over is refused.
    const refused = errorsOf(media);
    expect(Object.keys(refused).sort()).toEqual([
      'edit.timeline.fonts[0].src', 'edit.timeline.soundtrack.src',
      ...[0, 1, 2, 3, 4].map((i) => `edit.timeline.tracks[${i}].clips[0].asset.src`),
    ].sort());
    expect(refused['edit.timeline.tracks[0].clips[0].asset.src']).toEqual([`must be an http(s) URL, got "${id}"`]);
    const caption = errorsOf(rawEdit([[{ asset: { type: 'caption', src: id }, start: 0, length: 1 }]]), { assetIds: true });
    expect(caption['edit.timeline.tracks[0].clips[0].asset.src']).toEqual([`must be an http(s) URL, got "${id}"`]);
    // Not an id: the message names both forms.
    const bad = errorsOf(rawEdit([[image({ asset: { type: 'image', src: 'ast_' } })]]), { assetIds: true });
    expect(bad['edit.timeline.tracks[0].clips[0].asset.src']).toEqual(['must be an http(s) URL or an asset id (ast_…), got "ast_"']);
  });

  it('refuses bad colours, naming the alpha-first form', () => {
    const errors = errorsOf(rawEdit([[image()]], { format: 'png' }, { background: 'red' }));
    expect(errors['edit.timeline.background']?.[0]).toMatch(/^must be a hex colour such as "#ffffff" or "#80ffffff" \(alpha first\), got "red"/);
  });

  it('checks alias references: unknown names, duplicates, circular references', () => {
    const errors = errorsOf(rawEdit([
      [image({ alias: 'a', start: 'alias://b' }), image({ alias: 'b', start: 'alias://a' })],
      [image({ alias: 'a', length: 'alias://nobody' })],
    ]));
    expect(errors['edit.timeline.tracks[1].clips[0].alias']).toEqual(['alias "a" is already used by tracks[0].clips[0]']);
    expect(errors['edit.timeline.tracks[1].clips[0].length']).toEqual(['refers to alias "nobody", which no clip defines']);
    expect(errors['edit.timeline.tracks[0].clips[0].start']).toEqual([
      'circular timing reference: tracks[0].clips[0].start → tracks[0].clips[1].start → tracks[0].clips[0].start',
    ]);
  });

  it('checks that a caption transcribes an audio or video clip', () => {
    const errors = errorsOf(rawEdit([
      [{ asset: { type: 'caption', src: 'alias://logo' }, start: 0, length: 'end' }],
      [image({ alias: 'logo' })],
    ]));
    expect(errors).toEqual({ 'edit.timeline.tracks[0].clips[0].asset.src': ['alias "logo" names a image clip; captions need an audio or video clip'] });
  });

  it('refuses a body that is not an object', () => {
    expect(errorsOf([1, 2])).toEqual({ edit: ['must be an object, got an array'] });
  });
});

describe('assertEdit', () => {
  it('returns the parsed edit', () => {
    expect(assertEdit(rawEdit([[image()]])).output.format).toBe('mp4');
  });

  it('throws 422 TEMPLATE_VALIDATION_FAILED with the errors object', () => {
    const err = refusal(rawEdit([[image({ length: 'x' })]]));
    expect(err.code).toBe('TEMPLATE_VALIDATION_FAILED');
    expect(err.status).toBe(422);
    expect(err.extras.errors).toHaveProperty(['edit.timeline.tracks[0].clips[0].length']);
    expect(err.message).toMatch(/edit\.timeline\.tracks\[0\]\.clips\[0\]\.length must be a number/);
  });

  it('throws 422 EMPTY_TIMELINE when no track holds a clip', () => {
    for (const input of [rawEdit([]), rawEdit([[], []])]) {
      const err = refusal(input);
      expect(err.code).toBe('EMPTY_TIMELINE');
      expect(err.status).toBe(422);
    }
  });
});

describe('output.pdf (issue 21: PDF pages)', () => {
  it('reads a resolution or a fixed page size, named (any case) or in points', () => {
    expect(parsed(rawEdit([[image()]], { format: 'pdf', pdf: { dpi: '300' } })).output.pdf).toEqual({ dpi: 300 });
    expect(parsed(rawEdit([[image()]], { format: 'pdf', pdf: { pageSize: 'letter' } })).output.pdf).toEqual({ pageSize: 'Letter' });
    expect(parsed(rawEdit([[image()]], { format: 'pdf', pdf: { pageSize: { width: 400, height: 300 } } })).output.pdf).toEqual({ pageSize: { width: 400, height: 300 } });
  });

  it('refuses a bad page by path', () => {
    const errors = errorsOf(rawEdit([[image()]], { format: 'pdf', pdf: { dpi: 5, pageSize: 'B4' } }));
    expect(errors['edit.output.pdf.dpi']).toEqual(['must be at least 36, got 5']);
    expect(errors['edit.output.pdf.pageSize']).toEqual([
      'must be one of A3, A4, A5, Letter, Legal; got "B4"',
      'give dpi or pageSize, not both (a fixed page sets the resolution itself)',
    ]);
    const points = errorsOf(rawEdit([[image()]], { format: 'pdf', pdf: { pageSize: { width: 20000 }, margin: 3 } }));
    expect(points).toEqual({
      'edit.output.pdf.pageSize.width': ['must be at most 14400, got 20000'],
      'edit.output.pdf.pageSize.height': ['is required'],
      'edit.output.pdf.margin': ['unknown field "margin"'],
    });
  });
});
