import { renderToStaticMarkup } from 'react-dom/server';
import type { Size } from '#libs/edit-spec';
import type { TextBlock } from './props.js';
import { textBlockElement } from './text-view.js';

/**
 * A text, title or rich-text clip's block as a document of `box` design pixels for the print tab
 * (print.ts): the elements the video draws for it at rest (text-view.ts, the same CSS), the render's
 * @font-face rules (`fontFaces`, as html clips get them), a transparent page. Chromium prints it as a
 * one-page vector PDF whose words are text in subset-embedded fonts (docs/decisions.md "PDF text
 * clips"). Its CSP allows no script and fonts only from the render's media server (`origin`).
 */
export function textDocument(block: TextBlock, box: Size, opts: { origin: string; fontFaces: string }): string {
  const csp = ["default-src 'none'", `font-src ${opts.origin} data:`, "style-src 'unsafe-inline'"].join('; ');
  // The rules come from font-face.ts (family names through cssString): "</style" cannot occur in them.
  return [
    '<!doctype html><html><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    `<style>${opts.fontFaces.replace(/<\/(style)/gi, '<\\/$1')}\nhtml,body{margin:0;padding:0;width:${box.width}px;height:${box.height}px;overflow:hidden;background:transparent}`,
    'body{position:relative}</style></head>',
    `<body>${renderToStaticMarkup(textBlockElement(block))}</body></html>`,
  ].join('');
}
