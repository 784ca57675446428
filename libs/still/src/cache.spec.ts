import { ByteLru } from './cache.js';

describe('ByteLru, the still engine\'s caches', () => {
  it('without a probation window: least recently used out first, the total never over the budget', () => {
    const lru = new ByteLru<string>(100);
    for (const k of ['a', 'b', 'c', 'd']) lru.set(k, k.toUpperCase(), 25);
    expect(lru.get('a')).toBe('A');
    lru.set('e', 'E', 25);
    expect([lru.get('a'), lru.get('b'), lru.get('c'), lru.get('e')]).toEqual(['A', undefined, 'C', 'E']);
    expect(lru.bytes).toBe(100);
    // A value over a quarter of the budget is not kept (it would flush the rest).
    lru.set('huge', 'H', 26);
    expect(lru.get('huge')).toBeUndefined();
  });

  it('with a probation window: values used once take the window at most and never push out those used again', () => {
    const lru = new ByteLru<string>(1000, { probationEntries: 4 });
    lru.set('photo', 'P', 100);
    expect(lru.get('photo')).toBe('P'); // used again: kept with the values that repeat
    for (let i = 0; i < 500; i++) {
      lru.set(`text ${i}`, `T${i}`, 10);
      expect(lru.bytes).toBeLessThanOrEqual(100 + 4 * 10);
    }
    expect(lru.get('photo')).toBe('P');
    // The last four new values wait in the window; older ones are gone.
    expect([lru.get('text 495'), lru.get('text 496'), lru.get('text 499')]).toEqual([undefined, 'T496', 'T499']);
    expect(lru.bytes).toBe(100 + 4 * 10);
  });

  it('the window holds at most a quarter of the budget in bytes, and the total stays within the budget', () => {
    const lru = new ByteLru<string>(1000, { probationEntries: 64 });
    for (let i = 0; i < 20; i++) lru.set(`big ${i}`, 'B', 100);
    expect(lru.bytes).toBe(200);
    // Promoted values fill the rest, least recently used out first.
    for (let i = 0; i < 12; i++) {
      lru.set(`kept ${i}`, 'K', 100);
      lru.get(`kept ${i}`);
    }
    expect(lru.bytes).toBeLessThanOrEqual(1000);
    expect(lru.get('kept 0')).toBeUndefined();
    expect(lru.get('kept 11')).toBe('K');
    lru.clear();
    expect(lru.bytes).toBe(0);
  });

  it('a value that left the window unused and comes back is kept at once (its key was remembered)', () => {
    const lru = new ByteLru<string>(1000, { probationEntries: 2 });
    lru.set('photo', 'P', 10);
    for (let i = 0; i < 5; i++) lru.set(`text ${i}`, 'T', 10);
    expect(lru.get('photo')).toBeUndefined(); // out of the window, unused
    lru.set('photo', 'P', 10);
    for (let i = 5; i < 50; i++) lru.set(`text ${i}`, 'T', 10);
    expect(lru.get('photo')).toBe('P');
    expect(lru.bytes).toBe(10 + 2 * 10);
  });

  it('a value set again replaces the old one and its bytes', () => {
    const lru = new ByteLru<string>(1000, { probationEntries: 4 });
    lru.set('k', 'old', 100);
    lru.set('k', 'new', 50);
    expect(lru.bytes).toBe(50);
    expect(lru.get('k')).toBe('new');
    lru.set('k', 'newer', 70);
    expect(lru.bytes).toBe(70);
    expect(lru.get('k')).toBe('newer');
  });
});
