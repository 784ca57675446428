import type { Easing } from './model.js';

type ControlPoints = readonly [number, number, number, number];

/** Cubic-bézier control points (x1, y1, x2, y2) of Shotstack's easing names (the CSS / Penner set). */
export const EASING_CURVES: Readonly<Record<Easing, ControlPoints>> = {
  ease: [0.25, 0.1, 0.25, 1],
  easeIn: [0.42, 0, 1, 1],
  easeOut: [0, 0, 0.58, 1],
  easeInOut: [0.42, 0, 0.58, 1],
  easeInQuad: [0.55, 0.085, 0.68, 0.53],
  easeInCubic: [0.55, 0.055, 0.675, 0.19],
  easeInQuart: [0.895, 0.03, 0.685, 0.22],
  easeInQuint: [0.755, 0.05, 0.855, 0.06],
  easeInSine: [0.47, 0, 0.745, 0.715],
  easeInExpo: [0.95, 0.05, 0.795, 0.035],
  easeInCirc: [0.6, 0.04, 0.98, 0.335],
  easeInBack: [0.6, -0.28, 0.735, 0.045],
  easeOutQuad: [0.25, 0.46, 0.45, 0.94],
  easeOutCubic: [0.215, 0.61, 0.355, 1],
  easeOutQuart: [0.165, 0.84, 0.44, 1],
  easeOutQuint: [0.23, 1, 0.32, 1],
  easeOutSine: [0.39, 0.575, 0.565, 1],
  easeOutExpo: [0.19, 1, 0.22, 1],
  easeOutCirc: [0.075, 0.82, 0.165, 1],
  easeOutBack: [0.175, 0.885, 0.32, 1.275],
  easeInOutQuad: [0.455, 0.03, 0.515, 0.955],
  easeInOutCubic: [0.645, 0.045, 0.355, 1],
  easeInOutQuart: [0.77, 0, 0.175, 1],
  easeInOutQuint: [0.86, 0, 0.07, 1],
  easeInOutSine: [0.445, 0.05, 0.55, 0.95],
  easeInOutExpo: [1, 0, 0, 1],
  easeInOutCirc: [0.785, 0.135, 0.15, 0.86],
  easeInOutBack: [0.68, -0.55, 0.265, 1.55],
};

/** One coordinate of a cubic bézier from (0,0) to (1,1) with control values a and b, at parameter t. */
function bezier(a: number, b: number, t: number): number {
  const u = 1 - t;
  return 3 * u * u * t * a + 3 * u * t * t * b + t * t * t;
}

function bezierSlope(a: number, b: number, t: number): number {
  const u = 1 - t;
  return 3 * u * u * a + 6 * u * t * (b - a) + 3 * t * t * (1 - b);
}

/** The curve parameter whose x is `x` (Newton's method, falling back to bisection). */
function solveX(x1: number, x2: number, x: number): number {
  let t = x;
  for (let i = 0; i < 8; i++) {
    const error = bezier(x1, x2, t) - x;
    if (Math.abs(error) < 1e-7) return t;
    const slope = bezierSlope(x1, x2, t);
    if (Math.abs(slope) < 1e-6) break;
    t -= error / slope;
  }
  let lo = 0;
  let hi = 1;
  t = x;
  while (hi - lo > 1e-7) {
    if (bezier(x1, x2, t) < x) lo = t;
    else hi = t;
    t = (lo + hi) / 2;
  }
  return t;
}

/** CSS `cubic-bezier(x1, y1, x2, y2)` evaluated at progress p (0..1). */
export function cubicBezier(points: ControlPoints, p: number): number {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  const [x1, y1, x2, y2] = points;
  return bezier(y1, y2, solveX(x1, x2, p));
}

/** Eased progress for a Shotstack easing name (0 → 0, 1 → 1; the Back curves overshoot). */
export function ease(easing: Easing, p: number): number {
  return cubicBezier(EASING_CURVES[easing], p);
}
