/**
 * The normalised edit spec: the Shotstack Edit API JSON after merge, validation and normalisation
 * (docs/edit-spec.md). Both renderers (sharp for stills, Remotion for video) read only this model.
 */

/** Any JSON value, as it arrives in a request body. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * An asset of the media library named by id where a media file is taken (a template edit's `src`, a
 * media field's value or default): the ids the service hands out (`ast_<ULID>`) and the stock
 * library's (`ast_lib_<slug>`). libs/assets resolves them to their files before an edit renders.
 */
export const ASSET_ID = /^ast_[A-Za-z0-9_]{1,60}$/;

// ---------------------------------------------------------------------------------------------
// Vocabularies (each list is the single source of its union type and of the validator's message)
// ---------------------------------------------------------------------------------------------

/** Output formats of this service (decisions.md): `jpg` is accepted and normalised to `jpeg`. */
export const OUTPUT_FORMATS = ['png', 'jpeg', 'pdf', 'mp4', 'gif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export const STILL_FORMATS: readonly OutputFormat[] = ['png', 'jpeg', 'pdf'];
export const VIDEO_FORMATS: readonly OutputFormat[] = ['mp4', 'gif'];

/** Resolution presets; Shotstack's `1080` is accepted and normalised to `fhd`. */
export const RESOLUTIONS = ['preview', 'mobile', 'sd', 'hd', 'fhd', '4k'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:5', '4:3'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** The largest output width or height (pixels) an edit may ask for. */
export const MAX_OUTPUT_SIDE = 8192;

export const FPS_VALUES = [12, 15, 23.976, 24, 25, 29.97, 30, 48, 50, 59.94, 60] as const;
export type Fps = (typeof FPS_VALUES)[number];

export const QUALITIES = ['verylow', 'low', 'medium', 'high', 'veryhigh'] as const;
export type Quality = (typeof QUALITIES)[number];

export const CODECS = ['h264', 'h265'] as const;
export type Codec = (typeof CODECS)[number];

export const POSITIONS = ['center', 'top', 'topRight', 'right', 'bottomRight', 'bottom', 'bottomLeft', 'left', 'topLeft'] as const;
export type Position = (typeof POSITIONS)[number];

export const FITS = ['crop', 'cover', 'contain', 'none'] as const;
export type Fit = (typeof FITS)[number];

export const FILTERS = ['blur', 'boost', 'contrast', 'darken', 'greyscale', 'lighten', 'muted', 'negative'] as const;
export type Filter = (typeof FILTERS)[number];

export const SPEEDS = ['', 'Slow', 'Fast'] as const;
export type Speed = (typeof SPEEDS)[number];

export const EFFECT_MOTIONS = ['zoomIn', 'zoomOut', 'slideLeft', 'slideRight', 'slideUp', 'slideDown'] as const;
export type EffectMotion = (typeof EFFECT_MOTIONS)[number];
/** A motion effect: `zoomIn`, `zoomInSlow`, `slideLeftFast`, … */
export type Effect = `${EffectMotion}${Speed}`;
export const EFFECTS: readonly Effect[] = EFFECT_MOTIONS.flatMap((m) => SPEEDS.map((s): Effect => `${m}${s}`));

export const TRANSITION_MOTIONS = [
  'fade', 'reveal', 'wipeLeft', 'wipeRight', 'slideLeft', 'slideRight', 'slideUp', 'slideDown',
  'carouselLeft', 'carouselRight', 'carouselUp', 'carouselDown',
  'shuffleTopRight', 'shuffleRightTop', 'shuffleRightBottom', 'shuffleBottomRight',
  'shuffleBottomLeft', 'shuffleLeftBottom', 'shuffleLeftTop', 'shuffleTopLeft', 'zoom',
] as const;
export type TransitionMotion = (typeof TRANSITION_MOTIONS)[number];
/** A transition: `none`, `zoom`, or a motion with an optional Slow/Fast suffix (`fadeSlow`). */
export type TransitionName = 'none' | 'zoom' | `${Exclude<TransitionMotion, 'zoom'>}${Speed}`;
export const TRANSITIONS: readonly TransitionName[] = [
  'none',
  ...TRANSITION_MOTIONS.flatMap((m): TransitionName[] => (m === 'zoom' ? ['zoom'] : SPEEDS.map((s): TransitionName => `${m}${s}`))),
];

export const INTERPOLATIONS = ['linear', 'bezier', 'constant'] as const;
export type Interpolation = (typeof INTERPOLATIONS)[number];

export const EASINGS = [
  'ease', 'easeIn', 'easeOut', 'easeInOut',
  'easeInQuad', 'easeInCubic', 'easeInQuart', 'easeInQuint', 'easeInSine', 'easeInExpo', 'easeInCirc', 'easeInBack',
  'easeOutQuad', 'easeOutCubic', 'easeOutQuart', 'easeOutQuint', 'easeOutSine', 'easeOutExpo', 'easeOutCirc', 'easeOutBack',
  'easeInOutQuad', 'easeInOutCubic', 'easeInOutQuart', 'easeInOutQuint', 'easeInOutSine', 'easeInOutExpo', 'easeInOutCirc', 'easeInOutBack',
] as const;
export type Easing = (typeof EASINGS)[number];

export const VOLUME_EFFECTS = ['none', 'fadeIn', 'fadeOut', 'fadeInFadeOut'] as const;
export type VolumeEffect = (typeof VOLUME_EFFECTS)[number];

export const SOUNDTRACK_EFFECTS = ['fadeIn', 'fadeOut', 'fadeInFadeOut'] as const;
export type SoundtrackEffect = (typeof SOUNDTRACK_EFFECTS)[number];

export const ASSET_TYPES = ['image', 'video', 'text', 'title', 'rich-text', 'html', 'shape', 'svg', 'audio', 'caption', 'luma'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

// ---------------------------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------------------------

/** One keyframe segment (Shotstack "Tween"); `start` is relative to the clip, in seconds. */
export interface Tween {
  from: number;
  to: number;
  start: number;
  length: number;
  interpolation?: Interpolation;
  easing?: Easing;
}

/** A property that is either a constant or a list of keyframe segments. */
export type Animatable = number | Tween[];

// ---------------------------------------------------------------------------------------------
// Assets
// ---------------------------------------------------------------------------------------------

/** Fractions (0..1) of the asset cut from each side. */
export interface Crop {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

export interface ChromaKey {
  color: string;
  threshold?: number;
  halo?: number;
}

export interface ImageAsset {
  type: 'image';
  src: string;
  crop?: Crop;
}

export interface VideoAsset {
  type: 'video';
  src: string;
  /** Seconds skipped at the start of the source. */
  trim: number;
  volume: Animatable;
  volumeEffect: VolumeEffect;
  /** Playback rate, 0..10 (1 = normal). */
  speed: number;
  crop?: Crop;
  chromaKey?: ChromaKey;
  transcode?: boolean;
}

export interface AudioAsset {
  type: 'audio';
  src: string;
  trim: number;
  volume: Animatable;
  speed: number;
  effect: VolumeEffect;
}

export interface LumaAsset {
  type: 'luma';
  src: string;
  trim: number;
}

export type HorizontalAlign = 'left' | 'center' | 'right';

export interface TextFont {
  family?: string;
  color?: string;
  opacity?: number;
  size?: number;
  weight?: number;
  lineHeight?: number;
}

export interface TextBackground {
  color?: string;
  opacity?: number;
  padding?: number;
  borderRadius?: number;
}

export interface Stroke {
  width: number;
  color: string;
}

/** Legacy Shotstack text asset. */
export interface TextAsset {
  type: 'text';
  text: string;
  width?: number;
  height?: number;
  font: TextFont;
  background?: TextBackground;
  alignment: { horizontal: HorizontalAlign; vertical: 'top' | 'center' | 'bottom' };
  stroke?: Stroke;
  animation?: { preset: 'typewriter'; duration?: number };
  ellipsis?: string;
}

export const TITLE_STYLES = ['minimal', 'blockbuster', 'vogue', 'sketchy', 'skinny', 'chunk', 'chunkLight', 'marker', 'future', 'subtitle'] as const;
export type TitleStyle = (typeof TITLE_STYLES)[number];
export const TITLE_SIZES = ['xx-small', 'x-small', 'small', 'medium', 'large', 'x-large', 'xx-large'] as const;
export type TitleSize = (typeof TITLE_SIZES)[number];

/** Legacy Shotstack title asset (preset styles); its own position/offset place the text in the frame. */
export interface TitleAsset {
  type: 'title';
  text: string;
  style?: TitleStyle;
  color?: string;
  size: TitleSize;
  background?: string;
  position: Position;
  offset: { x: number; y: number };
}

/** Legacy Shotstack HTML asset: HTML + CSS laid out in a width × height box. */
export interface HtmlAsset {
  type: 'html';
  html: string;
  css: string;
  width?: number;
  height?: number;
  background?: string;
  /** Where the content sits inside its box. */
  position: Position;
}

export type ShapeGeometry =
  | { shape: 'rectangle'; rectangle: { width: number; height: number; cornerRadius: number } }
  | { shape: 'circle'; circle: { radius: number } }
  | { shape: 'line'; line: { length: number; thickness: number } };

export type ShapeAsset = {
  type: 'shape';
  /** Bounding box; the viewport when omitted. */
  width?: number;
  height?: number;
  fill?: { color?: string; opacity?: number };
  stroke?: { color?: string; width?: number };
} & ShapeGeometry;

/** SVG: raw markup (Shotstack) or an http(s) URL of an .svg file (house extension). */
export interface SvgAsset {
  type: 'svg';
  src: string;
}

export interface CaptionFont {
  family?: string;
  color?: string;
  opacity?: number;
  size?: number;
  lineHeight?: number;
  stroke?: string;
  strokeWidth?: number;
}

/** Subtitles burnt in from an SRT/VTT URL, or `alias://NAME` of an audio/video clip to transcribe. */
export interface CaptionAsset {
  type: 'caption';
  src: string;
  font?: CaptionFont;
  background?: { color?: string; opacity?: number; padding?: number; borderRadius?: number };
  margin?: { top?: number; left?: number; right?: number };
  trim: number;
  speed: number;
}

export interface RichTextStroke {
  width: number;
  color: string;
  opacity: number;
}

export interface GradientStop {
  offset: number;
  color: string;
}

export interface RichTextAsset {
  type: 'rich-text';
  text: string;
  font: {
    family: string;
    size: number;
    weight: number;
    color: string;
    opacity: number;
    background?: string;
    stroke?: RichTextStroke;
  };
  style?: {
    letterSpacing?: number;
    wordSpacing?: number;
    lineHeight?: number;
    textTransform?: 'none' | 'uppercase' | 'lowercase' | 'capitalize';
    textDecoration?: 'none' | 'underline' | 'line-through';
    gradient?: { type: 'linear' | 'radial'; angle: number; stops: GradientStop[] };
  };
  stroke?: RichTextStroke;
  shadow?: { offsetX: number; offsetY: number; blur: number; color: string; opacity: number };
  background?: { color?: string; opacity: number; borderRadius: number };
  border?: { width: number; color: string; opacity: number; radius: number };
  padding?: { top: number; right: number; bottom: number; left: number };
  /** `alignment` is accepted as an alias of `align`. */
  align: { horizontal: HorizontalAlign; vertical: 'top' | 'middle' | 'bottom' };
  animation?: {
    preset: 'fadeIn' | 'slideIn' | 'typewriter' | 'ascend' | 'shift' | 'movingLetters';
    duration?: number;
    style?: 'character' | 'word';
    direction?: 'left' | 'right' | 'up' | 'down';
  };
}

export type Asset =
  | ImageAsset
  | VideoAsset
  | TextAsset
  | TitleAsset
  | RichTextAsset
  | HtmlAsset
  | ShapeAsset
  | SvgAsset
  | AudioAsset
  | CaptionAsset
  | LumaAsset;

/** Assets with a src that is an intrinsic-duration media file. */
export type MediaAsset = VideoAsset | AudioAsset | LumaAsset;

// ---------------------------------------------------------------------------------------------
// Clip, track, timeline
// ---------------------------------------------------------------------------------------------

/** `alias://NAME`: the start or length of the clip whose `alias` is NAME. */
export type AliasRef = `alias://${string}`;
export type ClipStart = number | 'auto' | AliasRef;
export type ClipLength = number | 'auto' | 'end' | AliasRef;

export interface Transform {
  rotate?: { angle: Animatable };
  skew?: { x: Animatable; y: Animatable };
  flip?: { horizontal: boolean; vertical: boolean };
}

export interface ClipTransition {
  in?: TransitionName;
  out?: TransitionName;
}

export interface Clip {
  asset: Asset;
  start: ClipStart;
  length: ClipLength;
  /** Default `crop` for image/video/luma, `none` for assets that size themselves (docs/edit-spec.md). */
  fit: Fit;
  scale: Animatable;
  /** Clip bounding box in pixels; the viewport when omitted. */
  width?: number;
  height?: number;
  position: Position;
  /** Fractions of the viewport: x right-positive, y up-positive. */
  offset: { x: Animatable; y: Animatable };
  opacity: Animatable;
  transform?: Transform;
  filter?: Filter;
  effect?: Effect;
  transition?: ClipTransition;
  alias?: string;
}

export interface Track {
  clips: Clip[];
}

export interface Soundtrack {
  src: string;
  effect?: SoundtrackEffect;
  volume: number;
}

export interface Timeline {
  /** `#rrggbb`, `#rgb`, `#aarrggbb` (Shotstack: alpha first) or `transparent`; default `#000000`. */
  background: string;
  fonts: { src: string }[];
  soundtrack?: Soundtrack;
  /** tracks[0] is the top layer. */
  tracks: Track[];
  cache?: boolean;
}

export interface Output {
  format: OutputFormat;
  resolution?: Resolution;
  aspectRatio?: AspectRatio;
  size?: { width: number; height: number };
  fps?: Fps;
  quality?: Quality;
  codec?: Codec;
  scaleTo?: Resolution;
  range?: { start: number; length?: number };
  poster?: { capture: number };
  thumbnail?: { capture: number; scale: number };
  repeat?: boolean;
  mute?: boolean;
  /** House: the page of a PDF output (docs/edit-spec.md "PDF page"); other formats ignore it. */
  pdf?: PdfPage;
}

/** Named paper sizes a PDF page may take (portrait; the page turns with a landscape frame). */
export const PAGE_SIZES = ['A3', 'A4', 'A5', 'Letter', 'Legal'] as const;
export type PageSizeName = (typeof PAGE_SIZES)[number];

export interface PdfPage {
  /** Design pixels per inch: the page is the frame at this resolution (default 150: 1240×1754 is A4). */
  dpi?: number;
  /** A fixed page (a named paper size, or points) the frame is fitted into, centred. */
  pageSize?: PageSizeName | { width: number; height: number };
}

export interface MergeField {
  find: string;
  replace: JsonValue;
}

export interface EditSpec {
  timeline: Timeline;
  output: Output;
  /** Edit-level callback URL (Shotstack field); the render body's `callback` wins over it. */
  callback?: string;
}
