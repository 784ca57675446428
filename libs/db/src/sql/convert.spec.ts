import { dbArray, fromDb, toDb } from './convert.js';

describe('dialect conversion', () => {
  const at = new Date('2026-11-22T10:00:00.123Z');

  it('writes dates as epoch ms and booleans as 0/1 on SQLite, as themselves on PostgreSQL', () => {
    expect(toDb('sqlite', at)).toBe(at.getTime());
    expect(toDb('postgresql', at)).toBe(at);
    expect([toDb('sqlite', true), toDb('sqlite', false)]).toEqual([1, 0]);
    expect([toDb('postgresql', true), toDb('postgresql', false)]).toEqual([true, false]);
  });

  it('writes objects and arrays as JSON text, undefined as NULL, and leaves scalars and buffers alone', () => {
    for (const dialect of ['sqlite', 'postgresql'] as const) {
      expect(toDb(dialect, { a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
      expect(toDb(dialect, ['render.completed'])).toBe('["render.completed"]');
      expect(toDb(dialect, undefined)).toBeNull();
      expect(toDb(dialect, null)).toBeNull();
      expect(toDb(dialect, 'text')).toBe('text');
      expect(toDb(dialect, 42)).toBe(42);
      const buf = Buffer.from('ab');
      expect(toDb(dialect, buf)).toBe(buf);
    }
  });

  it('binds a dbArray as one array parameter, not as JSON', () => {
    expect(toDb('postgresql', dbArray(['a', null]))).toEqual(['a', null]);
  });

  it('reads dates back from epoch ms (SQLite), from PostgreSQL timestamp text and from Date', () => {
    expect(fromDb('sqlite', 'date', at.getTime())).toEqual(at);
    expect(fromDb('sqlite', 'date', String(at.getTime()))).toEqual(at);
    expect(fromDb('postgresql', 'date', '2026-11-22 10:00:00.123+00')).toEqual(at);
    expect(fromDb('postgresql', 'date', at)).toBe(at);
  });

  it('reads booleans, JSON and bigints back as the entity holds them', () => {
    expect([fromDb('sqlite', 'boolean', 1), fromDb('sqlite', 'boolean', 0), fromDb('postgresql', 'boolean', true)]).toEqual([true, false, true]);
    expect(fromDb('sqlite', 'json', '{"a":[1]}')).toEqual({ a: [1] });
    // PostgreSQL's driver parses JSON itself: a JSON string value stays a string.
    expect(fromDb('postgresql', 'json', 'plain')).toBe('plain');
    expect(fromDb('postgresql', 'json', { a: 1 })).toEqual({ a: 1 });
    expect(fromDb('postgresql', 'number', '1048576')).toBe(1_048_576);
    expect(fromDb('sqlite', 'number', 7)).toBe(7);
  });

  it('keeps NULL as null whatever the column', () => {
    for (const kind of ['date', 'boolean', 'json', 'number'] as const) expect(fromDb('sqlite', kind, null)).toBeNull();
  });

  it('round-trips every kind through either dialect', () => {
    const values = { date: at, boolean: true, json: { events: ['render.failed'], n: 2 } } as const;
    for (const dialect of ['sqlite', 'postgresql'] as const) {
      for (const [kind, value] of Object.entries(values) as [keyof typeof values, unknown][]) {
        const stored = toDb(dialect, value);
        // PostgreSQL hands JSON back parsed and timestamps as text.
        const read = dialect === 'postgresql' && kind === 'json' ? JSON.parse(stored as string) : dialect === 'postgresql' && kind === 'date' ? (stored as Date).toISOString() : stored;
        expect(fromDb(dialect, kind, read)).toEqual(value);
      }
    }
  });
});
