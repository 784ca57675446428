import { cssColor, type HtmlAsset, type Position, type Size } from '#libs/edit-spec';

/** Files an html asset may pull in (images, fonts) are downloaded beforehand; at most this many. */
export const MAX_HTML_RESOURCES = 16;

const ATTRIBUTE_URL = /(?<![\w-])(?:src|poster|xlink:href)\s*=\s*["']\s*(https?:\/\/[^"'\s]+)\s*["']/gi;
const CSS_URL = /url\(\s*["']?\s*(https?:\/\/[^"')\s]+)\s*["']?\s*\)/gi;

/** http(s) URLs the html and css of an asset load (attributes and CSS url()), in order, once each. */
export function remoteUrls(html: string, css: string): string[] {
  const found = new Set<string>();
  for (const m of html.matchAll(ATTRIBUTE_URL)) found.add(m[1]!);
  for (const m of `${html}\n${css}`.matchAll(CSS_URL)) found.add(m[1]!);
  return [...found];
}

function placement(position: Position): { justifyContent: string; alignItems: string } {
  const horizontal = /left/i.test(position) ? 'flex-start' : /right/i.test(position) ? 'flex-end' : 'center';
  const vertical = /^top/.test(position) ? 'flex-start' : /^bottom/.test(position) ? 'flex-end' : 'center';
  return { justifyContent: horizontal, alignItems: vertical };
}

/**
 * The document of an html asset, for a sandboxed frame of `box` design pixels: no scripts (the
 * sandbox), no network beyond the render's own media server (the CSP), remote files replaced by the
 * local copies in `local`, the render's fonts declared, the content placed by `position`.
 */
export function htmlDocument(asset: HtmlAsset, box: Size, opts: { origin: string; fontFaces: string; local: ReadonlyMap<string, string> }): string {
  const swap = (text: string) => {
    let out = text;
    for (const [remote, local] of opts.local) out = out.split(remote).join(local);
    return out;
  };
  const csp = [
    "default-src 'none'",
    `img-src ${opts.origin} data:`,
    `media-src ${opts.origin} data:`,
    `font-src ${opts.origin} data:`,
    "style-src 'unsafe-inline'",
  ].join('; ');
  const { justifyContent, alignItems } = placement(asset.position);
  const background = asset.background ? cssColor(asset.background) : 'transparent';
  // User CSS cannot close the style element early: "</style" inside it is broken up.
  const css = swap(asset.css).replace(/<\/(style)/gi, '<\\/$1');
  return [
    '<!doctype html><html><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    `<style>${opts.fontFaces}\nhtml,body{margin:0;padding:0;width:${box.width}px;height:${box.height}px;overflow:hidden;background:${background}}`,
    `body{display:flex;justify-content:${justifyContent};align-items:${alignItems};font-family:"Open Sans",sans-serif}</style>`,
    `<style>${css}</style></head><body><div>${swap(asset.html)}</div></body></html>`,
  ].join('');
}
