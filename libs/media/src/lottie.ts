import { AssetRejected } from './rejected.js';

/** The top-level keys every Lottie (Bodymovin) animation has. */
export const LOTTIE_KEYS = ['v', 'fr', 'ip', 'op', 'layers'] as const;

/**
 * Whether the leading bytes look like a Lottie animation: a JSON object whose top-level keys include
 * all of LOTTIE_KEYS when the object ends within the head, or two of them when it is cut off (the
 * keys may follow a large `assets` array). Anything that is not JSON so far is refused. The full
 * check is lottieInfo's.
 */
export function lottieHeadVerdict(head: Buffer): boolean {
  const keys = topLevelKeys(head.toString('utf8').replace(/^\uFEFF/, ''));
  if (!keys) return false;
  const found = LOTTIE_KEYS.filter((k) => keys.names.has(k)).length;
  return keys.complete ? found === LOTTIE_KEYS.length : found >= 2;
}

/**
 * The keys of a JSON object's top level, read as far as the text goes; undefined when the text is
 * not the start of a JSON object. `complete` says whether the object's closing brace was reached.
 */
function topLevelKeys(text: string): { names: Set<string>; complete: boolean } | undefined {
  const names = new Set<string>();
  let at = 0;
  const n = text.length;
  const ws = () => {
    while (at < n && (text[at] === ' ' || text[at] === '\n' || text[at] === '\r' || text[at] === '\t')) at++;
  };
  /** Past a JSON string starting at `at` (a quote); its decoded value, or undefined when cut off or invalid. */
  const string = (): string | undefined => {
    const start = at;
    at++;
    while (at < n && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    if (at >= n) return undefined;
    at++;
    try {
      return JSON.parse(text.slice(start, at)) as string;
    } catch {
      return undefined;
    }
  };
  /** Past one JSON value; false on a syntax error, 'cut' when the text ends inside it. */
  const value = (): boolean | 'cut' => {
    ws();
    if (at >= n) return 'cut';
    const c = text[at]!;
    if (c === '"') return string() === undefined ? (at >= n ? 'cut' : false) : true;
    if (c === '{' || c === '[') {
      let depth = 0;
      for (; at < n; at++) {
        const d = text[at]!;
        if (d === '"') {
          if (string() === undefined) return at >= n ? 'cut' : false;
          at--;
        } else if (d === '{' || d === '[') depth++;
        else if (d === '}' || d === ']') {
          if (--depth === 0) {
            at++;
            return true;
          }
        }
      }
      return 'cut';
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at, at + 64));
    if (!m) return false;
    at += m[0].length;
    return at >= n ? 'cut' : true;
  };
  ws();
  if (text[at] !== '{') return undefined;
  at++;
  for (;;) {
    ws();
    if (at >= n) return { names, complete: false };
    if (text[at] === '}' && names.size === 0) return { names, complete: true };
    if (text[at] !== '"') return undefined;
    const key = string();
    if (key === undefined) return at >= n ? { names, complete: false } : undefined;
    names.add(key);
    ws();
    if (at >= n) return { names, complete: false };
    if (text[at] !== ':') return undefined;
    at++;
    const v = value();
    if (v === false) return undefined;
    if (v === 'cut') return { names, complete: false };
    ws();
    if (at >= n) return { names, complete: false };
    if (text[at] === '}') return { names, complete: true };
    if (text[at] !== ',') return undefined;
    at++;
  }
}

export interface LottieInfo {
  width: number;
  height: number;
  frames: number;
  fps: number;
  durationSec: number;
}

/** Reads and checks a whole Lottie animation: JSON, the top-level keys, and sound numbers within the limits. */
export function lottieInfo(text: string, limits: { maxLottieFrames: number; maxPixels: number }): LottieInfo {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new AssetRejected('The Lottie file is not valid JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new AssetRejected('The Lottie file is not a JSON object');
  const o = doc as Record<string, unknown>;
  const missing = [...LOTTIE_KEYS, 'w', 'h'].filter((k) => !(k in o));
  if (missing.length) throw new AssetRejected(`The Lottie animation lacks its ${missing.map((k) => `"${k}"`).join(', ')} key${missing.length > 1 ? 's' : ''}`);
  const num = (key: string, ok: (v: number) => boolean, what: string): number => {
    const v = o[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) throw new AssetRejected(`The Lottie animation's "${key}" must be ${what}`);
    return v;
  };
  if (typeof o.v !== 'string') throw new AssetRejected('The Lottie animation\'s "v" (its version) must be a string');
  if (!Array.isArray(o.layers)) throw new AssetRejected('The Lottie animation\'s "layers" must be an array');
  const fps = num('fr', (v) => v > 0 && v <= 240, 'a frame rate above 0 and at most 240');
  const ip = num('ip', (v) => v >= 0, 'a frame number of 0 or more');
  const op = num('op', (v) => v > ip, 'a frame number after "ip"');
  const width = num('w', (v) => v >= 1 && Number.isInteger(v), 'a whole number of pixels, at least 1');
  const height = num('h', (v) => v >= 1 && Number.isInteger(v), 'a whole number of pixels, at least 1');
  if (width * height > limits.maxPixels) throw new AssetRejected(`The Lottie animation is ${width} × ${height} pixels; at most ${limits.maxPixels.toLocaleString('en-US')} pixels are accepted`);
  const frames = op - ip;
  if (frames > limits.maxLottieFrames) throw new AssetRejected(`The Lottie animation has ${Math.ceil(frames).toLocaleString('en-US')} frames; at most ${limits.maxLottieFrames.toLocaleString('en-US')} are accepted`);
  return { width, height, frames, fps, durationSec: Math.round((frames / fps) * 1000) / 1000 };
}
