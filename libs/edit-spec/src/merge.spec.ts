import { applyMerge, findPlaceholders, placeholderName } from './merge.js';

describe('applyMerge', () => {
  it('gives a value that is exactly one placeholder the JSON type of its replacement', () => {
    const input = { length: '{{ LENGTH }}', muted: '{{MUTE}}', offset: '{{ OFFSET }}', tags: '{{TAGS}}', none: '{{ NOTHING }}' };
    const { value } = applyMerge(input, { LENGTH: 5, MUTE: true, OFFSET: { x: 0.1, y: -0.2 }, TAGS: ['a', 'b'], NOTHING: null });
    expect(value).toEqual({ length: 5, muted: true, offset: { x: 0.1, y: -0.2 }, tags: ['a', 'b'], none: null });
  });

  it('substitutes placeholders inside longer strings as text, ignoring spaces inside the braces', () => {
    const { value } = applyMerge(
      { text: 'Hello {{ NAME }}, you are {{AGE}} today {{   NAME}}!', html: '<p>{{ DATA }}</p>' },
      { NAME: 'Jane', AGE: 30, DATA: { a: 1 } },
    );
    expect(value).toEqual({ text: 'Hello Jane, you are 30 today Jane!', html: '<p>{"a":1}</p>' });
  });

  it('reaches strings nested in arrays and objects, and leaves object keys alone', () => {
    const input = { timeline: { tracks: [{ clips: [{ asset: { type: 'image', src: '{{ LOGO }}' } }] }] }, '{{ KEY }}': 1 };
    const { value } = applyMerge(input, { LOGO: 'https://cdn.example.com/logo.png', KEY: 'x' });
    expect(value).toEqual({ timeline: { tracks: [{ clips: [{ asset: { type: 'image', src: 'https://cdn.example.com/logo.png' } }] }] }, '{{ KEY }}': 1 });
  });

  it('is case-sensitive, as Shotstack is', () => {
    const { value, unresolved } = applyMerge({ text: '{{ name }}' }, { NAME: 'Jane' });
    expect(value).toEqual({ text: '{{ name }}' });
    expect(unresolved).toEqual(['name']);
  });

  it('leaves unknown placeholders untouched and lists each once, in order of appearance', () => {
    const { value, unresolved, used } = applyMerge(
      { a: '{{ B }}', b: 'x {{ A }} y {{ B }}', c: ['{{ A }}'], d: '{{ KNOWN }}' },
      [{ find: 'KNOWN', replace: 'k' }],
    );
    expect(value).toEqual({ a: '{{ B }}', b: 'x {{ A }} y {{ B }}', c: ['{{ A }}'], d: 'k' });
    expect(unresolved).toEqual(['B', 'A']);
    expect(used).toEqual(['KNOWN']);
  });

  it('accepts Shotstack find/replace pairs, tolerating a find written with its braces', () => {
    const { value } = applyMerge({ a: '{{ NAME }}', b: '{{ CITY }}' }, [
      { find: 'NAME', replace: 'Jane' },
      { find: '{{ CITY }}', replace: 'Lagos' },
    ]);
    expect(value).toEqual({ a: 'Jane', b: 'Lagos' });
  });

  it('does not modify its input', () => {
    const input = { text: '{{ NAME }}' };
    applyMerge(input, { NAME: 'Jane' });
    expect(input).toEqual({ text: '{{ NAME }}' });
  });

  it('treats a placeholder with text around it as partial, even if the text is spaces', () => {
    expect(applyMerge({ n: ' {{ N }}' }, { N: 5 }).value).toEqual({ n: ' 5' });
    expect(placeholderName(' {{ N }}')).toBeNull();
    expect(placeholderName('{{  N  }}')).toBe('N');
  });
});

describe('findPlaceholders', () => {
  const template = {
    timeline: {
      soundtrack: { src: '{{ MUSIC }}' },
      tracks: [
        {
          clips: [
            { asset: { type: 'rich-text', text: 'Hi {{ NAME }}' }, start: 0, length: '{{ LENGTH }}' },
            { asset: { type: 'image', src: '{{ PHOTO }}' }, start: 0, length: 3 },
          ],
        },
        {
          clips: [
            { asset: { type: 'video', src: '{{ CLIP }}' }, start: 0, length: 'auto' },
            { asset: { type: 'audio', src: '{{ VOICE }}' }, start: 0, length: 'auto' },
            { asset: { type: 'image', src: 'https://cdn.example.com/{{ NAME }}.png' }, start: 0, length: 1 },
            { asset: { type: 'luma', src: '{{ MASK }}' }, start: 0, length: 1 },
          ],
        },
      ],
    },
    output: { format: 'mp4' },
  };

  it('lists each name once, in order, with every path it occurs at', () => {
    const uses = findPlaceholders(template);
    expect(uses.map((u) => u.name)).toEqual(['MUSIC', 'NAME', 'LENGTH', 'PHOTO', 'CLIP', 'VOICE', 'MASK']);
    expect(uses.find((u) => u.name === 'NAME')?.paths).toEqual([
      'edit.timeline.tracks[0].clips[0].asset.text',
      'edit.timeline.tracks[1].clips[2].asset.src',
    ]);
  });

  it('marks placeholders that stand alone as an image, video or audio src (and the soundtrack)', () => {
    const kinds = Object.fromEntries(findPlaceholders(template).map((u) => [u.name, u.srcOf ?? 'text']));
    expect(kinds).toEqual({ MUSIC: 'audio', NAME: 'text', LENGTH: 'text', PHOTO: 'image', CLIP: 'video', VOICE: 'audio', MASK: 'text' });
  });

  it('prefixes paths with the given root', () => {
    expect(findPlaceholders({ output: { format: '{{ F }}' } }, 'template.edit')[0]?.paths).toEqual(['template.edit.output.format']);
  });
});
