import { ApiError } from '#libs/core';
import { readFieldDefinitions } from './fields.js';
import { Issues } from './check.js';
import { aspectRules, checkAspect, checkValues, normaliseValues, validateValues } from './values.js';

// Contract §2 (field definition), §4.1 (values, fields, merge), §7 TEMPLATE_VALIDATION_FAILED; decisions.md errors by path.

function schema(raw: unknown[]) {
  const issues = new Issues();
  const out = readFieldDefinitions(raw, undefined, issues);
  expect(issues.errors).toEqual({});
  return out;
}

const template = schema([
  { key: 'title', type: 'text', required: true, config: { maxLength: 10 } },
  { key: 'subtitle', type: 'text' },
  { key: 'photo', type: 'image', required: true, config: { aspectRatio: '1:1' } },
  { key: 'accent', type: 'color', defaultValue: '#FF3366' },
  { key: 'count', type: 'number', defaultValue: 3, config: { min: 1, max: 5, integer: true } },
  { key: 'dark', type: 'boolean', defaultValue: false },
  { key: 'size', type: 'select', defaultValue: 'm', config: { options: ['s', 'm', 'l'] } },
]);

function errorsOf(values: Record<string, unknown>) {
  const r = checkValues(template, values);
  if (r.ok) throw new Error('expected a failure');
  return r.errors;
}

describe('validateValues (§2 field rules)', () => {
  it('applies defaults and normalises what was sent', () => {
    const values = validateValues(template, { title: 'Hi', photo: ' https://cdn.example.com/a.png ', count: '4', dark: 'true' });
    expect(values).toEqual({ title: 'Hi', subtitle: '', photo: 'https://cdn.example.com/a.png', accent: '#ff3366', count: 4, dark: true, size: 'm' });
  });

  it('refuses a required field that is missing, null or blank', () => {
    expect(errorsOf({ photo: 'https://x.test/a.png' })).toEqual({ 'values.title': ['is required (Title)'] });
    expect(Object.keys(errorsOf({ title: '   ', photo: null }))).toEqual(['values.title', 'values.photo']);
  });

  it('refuses text longer than maxLength, counting characters not bytes', () => {
    expect(errorsOf({ title: 'x'.repeat(11), photo: 'https://x.test/a.png' })['values.title']).toEqual(['must be at most 10 characters, got 11']);
    expect(checkValues(template, { title: 'ééééééééé🎉', photo: 'https://x.test/a.png' }).ok).toBe(true);
  });

  it('refuses wrong types with the field key as path', () => {
    const errors = errorsOf({ title: { a: 1 }, photo: 'https://x.test/a.png', accent: 'red', count: 'many', dark: 'yes', size: 'xl' });
    expect(errors['values.title']).toEqual(['must be text, got an object']);
    expect(errors['values.accent']?.[0]).toMatch(/^must be a hex colour/);
    expect(errors['values.count']).toEqual(['must be a number, got "many"']);
    expect(errors['values.dark']).toEqual(['must be true or false, got "yes"']);
    expect(errors['values.size']).toEqual(['must be one of "s", "m", "l", got "xl"']);
  });

  it('refuses number values outside the bounds and fractions of an integer field', () => {
    expect(errorsOf({ title: 'a', photo: 'https://x.test/a.png', count: 9 })['values.count']).toEqual(['must be at most 5, got 9']);
    expect(errorsOf({ title: 'a', photo: 'https://x.test/a.png', count: 2.5 })['values.count']).toEqual(['must be a whole number, got 2.5']);
  });

  it('refuses media values that are neither http(s) URLs nor asset ids', () => {
    for (const photo of ['ftp://x.test/a.png', 'file:///etc/passwd', 'data:image/png;base64,AAAA', '/a.png', 42, 'ast_../x', 'ast_']) {
      expect(errorsOf({ title: 'a', photo })['values.photo']?.[0]).toMatch(/^must be an http\(s\) URL or an asset id \(ast_…\) of an image file/);
    }
  });

  it('takes an asset id of the media library as a media value (the renders module resolves it)', () => {
    const r = checkValues(template, { title: 'a', photo: 'ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P' });
    expect(r.ok && r.values.photo).toBe('ast_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P');
  });

  it('refuses unknown keys with a did-you-mean hint', () => {
    const errors = errorsOf({ title: 'a', photo: 'https://x.test/a.png', titel: 'b', Accent: '#000', zzz: 1 });
    expect(errors['values.titel']?.[0]).toMatch(/^"titel" is not a field of this template \(did you mean "title"\?\)/);
    expect(errors['values.Accent']?.[0]).toContain('(did you mean "accent"?)');
    expect(errors['values.zzz']?.[0]).not.toContain('did you mean');
  });

  it('throws 422 TEMPLATE_VALIDATION_FAILED with the errors object', () => {
    try {
      validateValues(template, {});
      throw new Error('no throw');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('TEMPLATE_VALIDATION_FAILED');
      expect((err as ApiError).status).toBe(422);
      expect((err as ApiError).extras.errors).toEqual({ 'values.title': ['is required (Title)'], 'values.photo': ['is required (Photo)'] });
    }
  });
});

describe('normaliseValues (§4.1 values, fields, merge)', () => {
  it('accepts values, fields as its alias, and merge pairs with or without braces', () => {
    expect(normaliseValues({ values: { a: 1 } })).toEqual({ a: 1 });
    expect(normaliseValues({ fields: { a: 1 } })).toEqual({ a: 1 });
    expect(normaliseValues({ merge: [{ find: 'a', replace: 1 }, { find: '{{ b }}', replace: 'x' }] })).toEqual({ a: 1, b: 'x' });
    expect(normaliseValues({})).toEqual({});
  });

  it('refuses several forms at once, and a field named twice in merge, with paths (422 VALIDATION_FAILED; the shapes are the DTO\'s)', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
        return null;
      } catch (err) {
        return { code: (err as ApiError).code, errors: (err as ApiError).extras.errors };
      }
    };
    expect(code(() => normaliseValues({ values: {}, merge: [] }))).toEqual({ code: 'VALIDATION_FAILED', errors: { merge: [expect.stringContaining('send field values once')] } });
    expect(code(() => normaliseValues({ values: { a: 1 }, fields: null, merge: null }))).toBeNull();
    expect(code(() => normaliseValues({ merge: [{ find: 'a', replace: 1 }, { find: '{{a}}', replace: 2 }] }))).toEqual({ code: 'VALIDATION_FAILED', errors: { 'merge[1].find': ['repeats "a"'] } });
  });
});

describe('image aspect ratio (checked after fetching)', () => {
  it('lists the rules that apply and checks a fetched size with a 2 % tolerance', () => {
    const merged = validateValues(template, { title: 'a', photo: 'https://x.test/a.png' });
    const rules = aspectRules(template, merged);
    expect(rules).toEqual([{ key: 'photo', path: 'values.photo', url: 'https://x.test/a.png', aspectRatio: '1:1' }]);
    expect(checkAspect(rules[0]!, { width: 1000, height: 1010 })).toBeNull();
    expect(checkAspect(rules[0]!, { width: 1600, height: 900 })).toBe('must be an image of aspect ratio 1:1, got 1600×900');
  });
});
