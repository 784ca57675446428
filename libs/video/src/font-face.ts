import { cssString, cssUrl } from './css.js';

/**
 * `@font-face` rules for the fonts of timeline.fonts, so the page draws them under the family names
 * the files declare (the still engine's names). The weight and style come from the font's OS/2
 * table, so a bold file is used for bold text instead of being synthesised from a regular one.
 */
export interface FaceTraits {
  weight: number;
  italic: boolean;
}

/** usWeightClass and the italic bit of fsSelection; 400 / upright when the table is missing. */
export function faceTraits(sfnt: Buffer): FaceTraits {
  try {
    let offset = 0;
    if (sfnt.readUInt32BE(0) === 0x74746366 /* ttcf */) offset = sfnt.readUInt32BE(12);
    const count = sfnt.readUInt16BE(offset + 4);
    for (let i = 0; i < count; i++) {
      const rec = offset + 12 + i * 16;
      if (sfnt.toString('latin1', rec, rec + 4) !== 'OS/2') continue;
      const table = sfnt.readUInt32BE(rec + 8);
      const weight = sfnt.readUInt16BE(table + 4);
      const fsSelection = sfnt.readUInt16BE(table + 62);
      return { weight: weight >= 1 && weight <= 1000 ? weight : 400, italic: (fsSelection & 1) === 1 };
    }
  } catch {
    // A short or odd table: the defaults below.
  }
  return { weight: 400, italic: false };
}

export function fontFaceRules(families: readonly string[], url: string, traits: FaceTraits): string {
  return families
    .map((family) => `@font-face { font-family: ${cssString(family)}; src: ${cssUrl(url)}; font-weight: ${traits.weight}; font-style: ${traits.italic ? 'italic' : 'normal'}; font-display: block; }`)
    .join('\n');
}
