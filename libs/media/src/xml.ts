/**
 * A small, tolerant XML tokenizer for the SVG sanitiser: no DTD processing (a DOCTYPE, with its
 * entities, is one token and is never expanded), no namespaces resolved, and no error ever thrown:
 * unterminated constructs run to the end of the input.
 */
export interface XmlAttr {
  /** As written, prefix included (`xlink:href`). */
  name: string;
  /** Entity references decoded; an unknown entity decodes to nothing. */
  value: string;
}

export type XmlToken =
  | { kind: 'text'; text: string }
  | { kind: 'open'; name: string; attrs: XmlAttr[]; selfClosing: boolean }
  | { kind: 'close'; name: string }
  | { kind: 'comment' | 'pi' | 'doctype' };

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The characters XML 1.0 allows in a document. */
export function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

/** Decodes the predefined entities and character references; anything else (`&custom;`) becomes nothing. */
export function decodeEntities(raw: string): string {
  if (!raw.includes('&')) return raw;
  return raw.replace(/&(#x[0-9a-fA-F]{1,8}|#[0-9]{1,10}|[A-Za-z_][\w.-]*);/g, (_, ref: string) => {
    if (ref[0] !== '#') return PREDEFINED[ref] ?? '';
    const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return isXmlChar(code) ? String.fromCodePoint(code) : '';
  });
}

const NAME_START = /[A-Za-z_:\u00c0-\uffff]/;
const NAME_END = /[\s/>=]/;

export function* xmlTokens(src: string): Generator<XmlToken> {
  let at = 0;
  const n = src.length;
  /** Index just past `needle` from `from`, or the end of the input. */
  const past = (needle: string, from: number) => {
    const i = src.indexOf(needle, from);
    return i < 0 ? n : i + needle.length;
  };
  while (at < n) {
    const lt = src.indexOf('<', at);
    if (lt !== at) {
      const end = lt < 0 ? n : lt;
      yield { kind: 'text', text: decodeEntities(src.slice(at, end)) };
      at = end;
      continue;
    }
    if (src.startsWith('<!--', at)) {
      at = past('-->', at + 4);
      yield { kind: 'comment' };
    } else if (src.startsWith('<![CDATA[', at)) {
      const end = src.indexOf(']]>', at + 9);
      yield { kind: 'text', text: src.slice(at + 9, end < 0 ? n : end) };
      at = end < 0 ? n : end + 3;
    } else if (src.startsWith('<!', at)) {
      at = skipDeclaration(src, at + 2);
      yield { kind: 'doctype' };
    } else if (src.startsWith('<?', at)) {
      at = past('?>', at + 2);
      yield { kind: 'pi' };
    } else if (src[at + 1] === '/') {
      let end = at + 2;
      while (end < n && !NAME_END.test(src[end]!)) end++;
      const name = src.slice(at + 2, end);
      at = past('>', end);
      yield { kind: 'close', name };
    } else if (at + 1 < n && NAME_START.test(src[at + 1]!)) {
      let end = at + 1;
      while (end < n && !NAME_END.test(src[end]!)) end++;
      const name = src.slice(at + 1, end);
      const { attrs, selfClosing, next } = readAttributes(src, end);
      at = next;
      yield { kind: 'open', name, attrs, selfClosing };
    } else {
      yield { kind: 'text', text: '<' };
      at++;
    }
  }
}

/** Past a `<!…>` declaration: a DOCTYPE's internal subset (`[…]`) and quoted strings may hold `>`. */
function skipDeclaration(src: string, at: number): number {
  let depth = 0;
  let quote = '';
  for (; at < src.length; at++) {
    const c = src[at]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
    else if (c === '>' && depth === 0) return at + 1;
  }
  return at;
}

function readAttributes(src: string, at: number): { attrs: XmlAttr[]; selfClosing: boolean; next: number } {
  const attrs: XmlAttr[] = [];
  const n = src.length;
  while (at < n) {
    const c = src[at]!;
    if (c === '>') return { attrs, selfClosing: false, next: at + 1 };
    if (c === '/' && src[at + 1] === '>') return { attrs, selfClosing: true, next: at + 2 };
    if (/[\s/="']/.test(c)) {
      at++;
      continue;
    }
    let end = at;
    while (end < n && !/[\s/>="']/.test(src[end]!)) end++;
    const name = src.slice(at, end);
    at = end;
    while (at < n && /\s/.test(src[at]!)) at++;
    if (src[at] !== '=') {
      attrs.push({ name, value: '' });
      continue;
    }
    at++;
    while (at < n && /\s/.test(src[at]!)) at++;
    const quote = src[at];
    let raw: string;
    if (quote === '"' || quote === "'") {
      const close = src.indexOf(quote, at + 1);
      raw = src.slice(at + 1, close < 0 ? n : close);
      at = close < 0 ? n : close + 1;
    } else {
      end = at;
      while (end < n && !/[\s>]/.test(src[end]!)) end++;
      raw = src.slice(at, end);
      at = end;
    }
    attrs.push({ name, value: decodeEntities(raw) });
  }
  return { attrs, selfClosing: false, next: n };
}
