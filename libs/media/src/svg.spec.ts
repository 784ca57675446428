import sharp from 'sharp';
import { AssetRejected } from './rejected.js';
import { sanitizeCss, sanitizeSvg, sanitizeSvgDocument } from './svg.js';

const wrap = (inner: string, rootAttrs = '') => `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50"${rootAttrs}>${inner}</svg>`;

/** What must never come back from the sanitiser, whatever the input. */
const DANGER = [/<\s*[\w:]*script/i, /\son[a-z]+\s*=\s*["']/i, /javascript:/i, /https?:/i, /\/\/evil/i, /foreignObject/i, /iframe|embed|object/i, /<!DOCTYPE/i, /<!ENTITY/i, /<\?/, /&(?!amp;|lt;|gt;|quot;)[a-z0-9]+;/i, /@import/i, /image-set/i];

describe('SVG sanitiser (issue 14: "SVG sanitised … before we ever serve it")', () => {
  const attacks: Record<string, string> = {
    'script element': wrap('<script>alert(1)</script><rect width="10" height="10"/>'),
    'script with type and CDATA': wrap('<script type="text/javascript"><![CDATA[ alert(document.cookie) ]]></script>'),
    'uppercase SCRIPT': wrap('<SCRIPT>alert(1)</SCRIPT>'),
    'mixed-case ScRiPt': wrap('<ScRiPt>alert(1)</ScRiPt>'),
    'namespaced script': wrap('<svg:script xmlns:svg="http://www.w3.org/2000/svg">alert(1)</svg:script>'),
    'XHTML script': wrap('<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script>'),
    'onload on the root': '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>',
    'uppercase ONLOAD': '<svg xmlns="http://www.w3.org/2000/svg" ONLOAD="alert(1)" OnClick="alert(2)"/>',
    'event handlers on shapes': wrap('<rect width="5" height="5" onclick="alert(1)" onmouseover="alert(2)" onbegin="x"/>'),
    'javascript: href': wrap('<a href="javascript:alert(1)"><text>click</text></a>'),
    'javascript: with entities and spaces': wrap('<a href="  &#106;avascript&#58;alert(1)"><text>click</text></a>'),
    'remote href on image': wrap('<image href="http://evil.example/track.png" width="10" height="10"/>'),
    'remote xlink:href on image': wrap('<image xlink:href="https://evil.example/track.png" width="10" height="10"/>'),
    'use of a remote document': wrap('<use href="http://evil.example/sprite.svg#icon"/><use xlink:href="//evil.example/x.svg#a"/>'),
    'data: SVG in an image': wrap('<image href="data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+"/>'),
    'foreignObject with HTML': wrap('<foreignObject width="100" height="100"><div xmlns="http://www.w3.org/1999/xhtml"><iframe src="http://evil.example"></iframe><img src="x" onerror="alert(1)"/></div></foreignObject>'),
    'style attribute with a remote url()': wrap('<rect width="5" height="5" style="fill: url(http://evil.example/p.svg#g); stroke: red"/>'),
    'style element with @import and url()': wrap('<style>@import url("https://evil.example/a.css"); rect { background: url(\'http://evil.example/b.png\') }</style>'),
    '@import split by a CDATA section': wrap('<style>@imp<![CDATA[ort "http://evil.example/a.css";]]></style>'),
    '@import rebuilt by removing one': wrap('<style>@imp@import "x";ort "http://evil.example/c.css";</style>'),
    'CSS escapes spelling url': wrap('<style>rect { fill: \\75 rl(http://evil.example/) }</style><rect style="fill:\\75rl(http://evil.example/)"/>'),
    'image-set in CSS': wrap('<style>rect { background-image: image-set("http://evil.example/a.png" 1x) }</style>'),
    'presentation attribute with a remote url()': wrap('<rect width="5" height="5" fill="url(http://evil.example/p.svg#g)" filter="url(https://evil.example/f.svg#f)"/>'),
    'url() left open': wrap('<rect fill="url(http://evil.example/p.svg#g" style="fill: url(\'http://evil.example/q"/><style>rect { fill: URL( http://evil.example/r</style>'),
    'animation that sets href': wrap('<a href="#x"><set attributeName="href" to="javascript:alert(1)"/><animate attributeName="xlink:href" values="javascript:alert(1)"/><text>x</text></a>'),
    'animation that sets an event handler': wrap('<rect width="5" height="5"><set attributeName="onclick" to="alert(1)"/></rect>'),
    'animation to a remote paint server': wrap('<rect width="5" height="5"><animate attributeName="fill" values="url(http://evil.example/#p)"/></rect>'),
    'entity expansion (billion laughs)': `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>${wrap('<text>&lol3;</text>')}`,
    'external entity (XXE)': `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${wrap('<text>&xxe;</text>')}`,
    'processing instruction (stylesheet)': `<?xml-stylesheet href="http://evil.example/s.css" type="text/css"?>${wrap('<?php echo 1 ?><rect width="1" height="1"/>')}`,
    'iframe, embed, object, html elements': wrap('<iframe src="http://evil.example"/><embed src="http://evil.example"/><object data="http://evil.example"/><html:a xmlns:html="http://www.w3.org/1999/xhtml" href="javascript:alert(1)">x</html:a>'),
    'script hidden in a comment-like text': wrap('<text>&lt;script&gt;alert(1)&lt;/script&gt;</text>'),
    'unterminated script': wrap('<script>alert(1)'),
    'attribute breaking out with quotes': wrap(`<rect width='5" onload="alert(1)' height="5"/>`),
  };

  it.each(Object.entries(attacks))('removes the attack: %s', (_, input) => {
    const out = sanitizeSvg(input);
    expect(out).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" xmlns:xlink="http:\/\/www\.w3\.org\/1999\/xlink"/);
    const rest = out.replace(/ xmlns(:xlink)?="[^"]*"/g, '');
    for (const pattern of DANGER) expect(rest).not.toMatch(pattern);
  });

  it('keeps what a drawing needs: shapes, gradients, local references, inline rasters, styles, text', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const input = wrap(
      '<defs><linearGradient id="g" x1="0" x2="1"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient>' +
        '<clipPath id="c"><circle cx="5" cy="5" r="5"/></clipPath></defs>' +
        '<style>.a { fill: url(#g); stroke: #333 }</style>' +
        '<rect class="a" width="100" height="50" fill="url(#g)" clip-path="url( \'#c\' )" style="opacity: .5"/>' +
        `<use href="#g"/><use xlink:href="#c"/><image href="${png}" width="4" height="4"/>` +
        '<text x="1" y="20" font-family="Lato">Tom &amp; Jerry &lt;3</text>' +
        '<animate attributeName="opacity" from="0" to="1" dur="1s"/>',
      ' viewBox="0 0 100 50"',
    );
    const out = sanitizeSvg(input);
    expect(out).toContain('<linearGradient id="g" x1="0" x2="1"><stop offset="0" stop-color="#f00"/>');
    expect(out).toContain('<style>.a { fill: url(#g); stroke: #333 }</style>');
    expect(out).toContain('<rect class="a" width="100" height="50" fill="url(#g)" clip-path="url( \'#c\' )" style="opacity: .5"/>');
    expect(out).toContain('<use href="#g"/><use xlink:href="#c"/>');
    expect(out).toContain(`<image href="${png}" width="4" height="4"/>`);
    expect(out).toContain('<text x="1" y="20" font-family="Lato">Tom &amp; Jerry &lt;3</text>');
    expect(out).toContain('<animate attributeName="opacity" from="0" to="1" dur="1s"/>');
    expect(out).toContain('viewBox="0 0 100 50"');
  });

  it('turns remote url() in CSS into none, keeps #fragments', () => {
    expect(sanitizeCss('a{fill:url(http://x/y)} b{fill:url("#ok")} c{src:url( \'//x\' )}')).toBe('a{fill:none} b{fill:url("#ok")} c{src:none}');
    expect(sanitizeCss('/* a */@import "x.css"; @IMPORT url(y); rect{fill:red}')).toBe('  rect{fill:red}');
    expect(sanitizeCss('rect{fill:\\72 ed}')).toBe('');
  });

  it('produces well-formed XML that a real SVG reader draws', async () => {
    const out = sanitizeSvg(
      `\uFEFF<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY c "red">]><!-- hi -->${wrap('<rect width="100" height="50" fill="&c;" stroke="&#x23;00f"/><script>x</script><text>a &bogus; b</text><g><rect width="1" height="1"/>')}trailing`,
    );
    expect(out).not.toContain('trailing');
    expect(out).toContain('<rect width="100" height="50" fill="" stroke="#00f"/><text>a  b</text><g><rect width="1" height="1"/></g></svg>');
    const { info } = await sharp(Buffer.from(out)).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([100, 50]);
  });

  it('reads the size from width and height, units included, else the viewBox', () => {
    const size = (attrs: string) => {
      const { width, height } = sanitizeSvgDocument(`<svg xmlns="http://www.w3.org/2000/svg" ${attrs}/>`);
      return [width, height];
    };
    expect(size('width="120" height="80"')).toEqual([120, 80]);
    expect(size('width="120px" height="1in"')).toEqual([120, 96]);
    expect(size('viewBox="0 0 300 150"')).toEqual([300, 150]);
    expect(size('width="100%" height="100%" viewBox="0,0,640,480"')).toEqual([640, 480]);
    expect(size('width="200" viewBox="0 0 100 50"')).toEqual([200, 100]);
    expect(size('width="auto"')).toEqual([null, null]);
  });

  it('refuses a document whose root is not svg', () => {
    expect(() => sanitizeSvg('<html><svg/></html>')).toThrow(AssetRejected);
    expect(() => sanitizeSvg('just text')).toThrow(/root element is not <svg>/);
  });

  it('copes with a large document quickly', () => {
    const shapes = Array.from({ length: 50_000 }, (_, i) => `<rect x="${i}" y="1" width="1" height="1" fill="#${(i % 4096).toString(16).padStart(3, '0')}"/>`).join('');
    const input = wrap(shapes);
    const started = Date.now();
    const out = sanitizeSvg(input);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(out.length).toBeGreaterThan(input.length * 0.9);
  });
});
