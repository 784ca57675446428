// The fields of each object of the edit spec, in one place: the parser reads only these (an unknown
// field is 422 "unknown field"), and the dashboard's template editor completes them (issue 29). Pure
// data, no imports beyond model.ts: the dashboard's bundle takes this file as it is.
import type { ASSET_TYPES } from './model.js';

export const EDIT_FIELDS = {
  edit: ['timeline', 'output', 'merge', 'callback', 'disk', 'instance'],
  timeline: ['background', 'fonts', 'soundtrack', 'tracks', 'cache'],
  soundtrack: ['src', 'effect', 'volume'],
  font: ['src'],
  track: ['clips'],
  clip: ['asset', 'start', 'length', 'fit', 'scale', 'width', 'height', 'position', 'offset', 'opacity', 'transform', 'filter', 'effect', 'transition', 'alias'],
  offset: ['x', 'y'],
  transition: ['in', 'out'],
  transform: ['rotate', 'skew', 'flip'],
  output: ['format', 'resolution', 'aspectRatio', 'size', 'fps', 'quality', 'codec', 'scaleTo', 'range', 'poster', 'thumbnail', 'repeat', 'mute', 'destinations', 'pdf'],
  size: ['width', 'height'],
  merge: ['find', 'replace'],
  textFont: ['family', 'color', 'opacity', 'size', 'weight', 'lineHeight'],
} as const;

/** The fields of each asset type (`type` included). */
export const ASSET_FIELDS: Record<(typeof ASSET_TYPES)[number], readonly string[]> = {
  image: ['type', 'src', 'crop'],
  video: ['type', 'src', 'trim', 'volume', 'volumeEffect', 'speed', 'crop', 'chromaKey', 'transcode'],
  audio: ['type', 'src', 'trim', 'volume', 'speed', 'effect'],
  luma: ['type', 'src', 'trim'],
  text: ['type', 'text', 'width', 'height', 'font', 'background', 'alignment', 'stroke', 'animation', 'ellipsis'],
  title: ['type', 'text', 'style', 'color', 'size', 'background', 'position', 'offset'],
  html: ['type', 'html', 'css', 'width', 'height', 'background', 'position'],
  'rich-text': ['type', 'text', 'font', 'style', 'stroke', 'shadow', 'background', 'border', 'padding', 'align', 'alignment', 'animation'],
  shape: ['type', 'shape', 'width', 'height', 'fill', 'stroke', 'rectangle', 'circle', 'line'],
  svg: ['type', 'src'],
  caption: ['type', 'src', 'font', 'background', 'margin', 'trim', 'speed'],
};
