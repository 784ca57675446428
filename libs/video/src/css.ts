/**
 * Strings of an edit (family names, file URLs) put into the CSS of the video page and of html
 * assets' documents: always through `cssString`, never spliced in by hand. Imported by the
 * composition page too (part of the bundle's key, bundle.ts).
 */

/** Characters a CSS string may hold as they are: everything else is escaped. */
const SAFE = /^[A-Za-z0-9 _.,:/@%+=?&#~-]$/;

/**
 * A quoted CSS string of `value` that no content can end early: every character outside a small
 * safe set becomes a hex escape `\HEX ` (CSS Syntax §4.3.7, "consume an escaped code point"; the
 * trailing space ends the escape and is consumed with it), NUL becomes U+FFFD (§3.3 replaces it
 * anyway; written out so no NUL reaches the page). Quotes, backslashes, newlines, form feeds,
 * `}`, `;`, `<` and non-ASCII all come out as escapes.
 */
export function cssString(value: string): string {
  let out = '"';
  for (const ch of value) {
    if (SAFE.test(ch)) {
      out += ch;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    // Lone surrogates and NUL are not code points CSS keeps: U+FFFD, as a parser would make them.
    const safe = cp === 0 || (cp >= 0xd800 && cp <= 0xdfff) ? 0xfffd : cp;
    out += `\\${safe.toString(16)} `;
  }
  return `${out}"`;
}

/** `url("…")` of a URL the engine made (the media server's), escaped like any other string. */
export const cssUrl = (url: string): string => `url(${cssString(url)})`;

/**
 * The Content-Security-Policy of the video page (the composition, served by Remotion's own server
 * as 'self'): scripts and style sheets of the bundle, inline styles (React and the page's
 * @font-face rules), and files only from the render's media server (`mediaOrigin`) and Remotion's
 * own server (its frame extractor is at 'self'/proxy). Nothing else: no other loopback port, no
 * other host. Without a media origin only 'self' remains.
 */
export function pageCsp(mediaOrigin: string | undefined): string {
  const media = /^http:\/\/127\.0\.0\.1:\d{1,5}$/.test(mediaOrigin ?? '') ? ` ${mediaOrigin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self'${media} data: blob:`,
    `media-src 'self'${media} data: blob:`,
    `font-src 'self'${media} data:`,
    `connect-src 'self'${media} data: blob:`,
    "worker-src 'self' blob:",
    // html assets: srcdoc frames (their own CSP allows only the media server).
    "frame-src 'self' about:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}
