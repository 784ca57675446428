import { Issues } from './check.js';
import { deriveFields, humanise, readFieldDefinitions } from './fields.js';

// Contract §2 field definitions; decisions.md "Template import" (fields derived from placeholders).

describe('readFieldDefinitions', () => {
  it('fills defaults: label from the key, text type, groups by kind, required false', () => {
    const issues = new Issues();
    const out = readFieldDefinitions([{ key: 'HEADLINE_TEXT' }, { key: 'logo', type: 'image', required: true }], undefined, issues);
    expect(issues.errors).toEqual({});
    expect(out).toEqual({
      fields: [
        { key: 'HEADLINE_TEXT', label: 'Headline text', type: 'text', group: 'Content', required: false, defaultValue: null, config: {} },
        { key: 'logo', label: 'Logo', type: 'image', group: 'Media', required: true, defaultValue: null, config: {} },
      ],
      fieldGroups: ['Content', 'Media'],
    });
  });

  it('names every problem by path', () => {
    const issues = new Issues();
    readFieldDefinitions(
      [
        { key: 'a b' },
        { key: 'x', type: 'picture' },
        { key: 'x' },
        { key: 'n', type: 'number', config: { maxLength: 3 } },
        { key: 'c', type: 'color', defaultValue: 'blue' },
        { key: 's', type: 'select', required: true },
        { key: 'g', group: 'Elsewhere', lable: 'typo' },
        { key: 'img', type: 'image' },
      ],
      ['Content'],
      issues,
    );
    expect(issues.errors).toEqual({
      'fields[0].key': [expect.stringMatching(/^must be 1 to 64 letters/)],
      'fields[1].type': ['must be one of text, image, video, audio, color, number, boolean, select, got "picture"'],
      'fields[2].key': ['repeats the key "x"'],
      'fields[3].config.maxLength': ['is not a setting of a number field (its settings: min, max, step, integer)'],
      'fields[3].defaultValue': [expect.stringContaining('optional number field')],
      'fields[4].defaultValue': [expect.stringMatching(/^must be a hex colour/)],
      'fields[5].config.options': ['is required for a select field'],
      'fields[6].lable': ['unknown field "lable" (did you mean "label"?)'],
      'fields[6].group': ['must be one of fieldGroups ("Content"), got "Elsewhere"'],
      'fields[7].defaultValue': [expect.stringContaining('optional image field')],
    });
  });

  it('checks defaults against the field\'s own config', () => {
    const issues = new Issues();
    readFieldDefinitions([{ key: 't', defaultValue: 'too long', config: { maxLength: 3 } }], undefined, issues);
    expect(issues.errors).toEqual({ 'fields[0].defaultValue': ['must be at most 3 characters, got 8'] });
  });
});

describe('deriveFields', () => {
  it('derives media types from src placeholders, text elsewhere, and defaults from the edit\'s merge', () => {
    const edit = {
      timeline: {
        soundtrack: { src: '{{ MUSIC }}' },
        tracks: [{ clips: [
          { asset: { type: 'rich-text', text: 'Hi {{ NAME }}, {{ NAME }}!' }, start: 0, length: '{{ SECONDS }}' },
          { asset: { type: 'image', src: '{{PHOTO}}' }, start: 0, length: 3 },
          { asset: { type: 'video', src: '{{ CLIP }}' }, start: 0, length: 3 },
        ] }],
      },
      output: { format: 'mp4' },
      merge: [{ find: 'SECONDS', replace: 4 }, { find: '{{CLIP}}', replace: 'https://x.test/c.mp4' }],
    };
    expect(deriveFields(edit)).toEqual({
      fields: [
        { key: 'MUSIC', label: 'Music', type: 'audio', group: 'Media', required: true, defaultValue: null, config: {} },
        { key: 'NAME', label: 'Name', type: 'text', group: 'Content', required: false, defaultValue: null, config: {} },
        { key: 'SECONDS', label: 'Seconds', type: 'text', group: 'Content', required: false, defaultValue: '4', config: {} },
        { key: 'PHOTO', label: 'Photo', type: 'image', group: 'Media', required: true, defaultValue: null, config: {} },
        { key: 'CLIP', label: 'Clip', type: 'video', group: 'Media', required: false, defaultValue: 'https://x.test/c.mp4', config: {} },
      ],
      fieldGroups: ['Media', 'Content'],
    });
  });

  it('humanises keys', () => {
    expect(humanise('productName')).toBe('Product name');
    expect(humanise('AUTHOR_PHOTO')).toBe('Author photo');
    expect(humanise('a.b-c')).toBe('A b c');
  });
});
