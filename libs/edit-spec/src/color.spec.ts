import { cssColor, parseColor } from './color.js';

describe('Shotstack colours', () => {
  it('read #rgb, #rrggbb, alpha-first #aarrggbb and transparent', () => {
    expect(parseColor('#fff')).toEqual({ r: 255, g: 255, b: 255, a: 1 });
    expect(parseColor('#FF3366')).toEqual({ r: 255, g: 51, b: 102, a: 1 });
    expect(parseColor('#80ffffff')).toEqual({ r: 255, g: 255, b: 255, a: 0.502 });
    expect(parseColor('transparent').a).toBe(0);
    expect(() => parseColor('red')).toThrow(/not a colour/);
  });

  it('write CSS rgba with an extra opacity multiplied in', () => {
    expect(cssColor('#80000000', 0.5)).toBe('rgba(0, 0, 0, 0.251)');
    expect(cssColor('#00aaff')).toBe('rgba(0, 170, 255, 1)');
  });
});
