import type { RecognizedWord } from './speech.js';

/**
 * Captions from recognised words: the cue cutter (words → cues, under the §4.3 options) and the
 * WebVTT and SubRip writers. Pure: the cached word timings of a transcription are re-cut with new
 * options for free.
 */

export interface Cue {
  /** Seconds: the first word's start and the last word's end. */
  start: number;
  end: number;
  /** The words joined by single spaces. */
  text: string;
  words: RecognizedWord[];
}

export interface CueOptions {
  /** Most words in one cue: an integer from 1 to 12 (§8), default 4. */
  wordsPerCue?: number;
  /** Most characters of `text`, default 42. A single longer word is a cue of its own, never split. */
  charsPerCue?: number;
  /** Longest a cue is held on screen in seconds, default 6. A single longer word is a cue of its own. */
  maxCueSec?: number;
}

export const CUE_DEFAULTS = { wordsPerCue: 4, charsPerCue: 42, maxCueSec: 6 } as const;
export const WORDS_PER_CUE_MAX = 12;
/** A silence between two words longer than this (seconds) starts a new cue. */
export const CUE_PAUSE_SEC = 1;

/** A word that ends a sentence: . ? ! or … , closing quotes or brackets allowed after it. */
const SENTENCE_END = /[.?!…]["'”’»)\]]*$/;

/** Whitespace inside a word (a provider's multi-word token) becomes one space; a cue's text stays one line. */
const clean = (word: string) => word.replace(/\s+/g, ' ').trim();

function checked(opts: CueOptions): Required<CueOptions> {
  const { wordsPerCue, charsPerCue, maxCueSec } = { ...CUE_DEFAULTS, ...opts };
  if (!Number.isInteger(wordsPerCue) || wordsPerCue < 1 || wordsPerCue > WORDS_PER_CUE_MAX) throw new RangeError(`wordsPerCue must be an integer from 1 to ${WORDS_PER_CUE_MAX}`);
  if (!Number.isInteger(charsPerCue) || charsPerCue < 1) throw new RangeError('charsPerCue must be a positive integer');
  if (!Number.isFinite(maxCueSec) || maxCueSec <= 0) throw new RangeError('maxCueSec must be a positive number');
  return { wordsPerCue, charsPerCue, maxCueSec };
}

/**
 * Cuts words into cues. A cue ends: at `wordsPerCue` words; before a word that would take its text
 * past `charsPerCue` characters; before a word that would hold it past `maxCueSec` seconds; after a
 * word ending a sentence; before a pause over CUE_PAUSE_SEC; and where the speaker changes. Words
 * are taken in order of their start (a stable sort); empty words are dropped.
 */
export function cutCues(words: readonly RecognizedWord[], opts: CueOptions = {}): Cue[] {
  const { wordsPerCue, charsPerCue, maxCueSec } = checked(opts);
  const ordered = words
    .map((w) => ({ ...w, word: clean(w.word) }))
    .filter((w) => w.word !== '')
    .sort((a, b) => a.start - b.start);
  const cues: Cue[] = [];
  let current: Cue | undefined;
  for (const word of ordered) {
    if (current) {
      const last = current.words.at(-1)!;
      const ends =
        current.words.length >= wordsPerCue ||
        current.text.length + 1 + word.word.length > charsPerCue ||
        Math.max(current.end, word.end) - current.start > maxCueSec ||
        SENTENCE_END.test(last.word) ||
        word.start - last.end > CUE_PAUSE_SEC ||
        word.speaker !== last.speaker;
      if (!ends) {
        current.words.push(word);
        current.text += ` ${word.word}`;
        current.end = Math.max(current.end, word.end);
        continue;
      }
    }
    current = { start: word.start, end: word.end, text: word.word, words: [word] };
    cues.push(current);
  }
  return cues;
}

/** The whole transcript: every word in order of its start, joined by single spaces. */
export function transcriptText(words: readonly RecognizedWord[]): string {
  return [...words]
    .sort((a, b) => a.start - b.start)
    .map((w) => clean(w.word))
    .filter(Boolean)
    .join(' ');
}

/** A cue's start and end in whole milliseconds; a cue of zero (or negative) length lasts 1 ms. */
function millis(cue: Cue): [number, number] {
  const start = Math.max(0, Math.round(cue.start * 1000));
  return [start, Math.max(start + 1, Math.round(cue.end * 1000))];
}

/** `HH:MM:SS` + separator + `mmm` (hours grow past two digits when they must). */
function timestamp(ms: number, separator: '.' | ','): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor(ms / 60_000) % 60;
  const seconds = Math.floor(ms / 1000) % 60;
  return `${pad(hours)}:${pad(minutes)}:${pad(seconds)}${separator}${pad(ms % 1000, 3)}`;
}

/** One line of cue text: `-->` would read as a timing line to a player. */
const oneLine = (text: string) => clean(text).replaceAll('-->', '->');

/**
 * A WebVTT file: the `WEBVTT` header, then each cue numbered from 1 with `HH:MM:SS.mmm` times;
 * `&`, `<` and `>` are escaped (a cue text is plain text, not markup).
 */
export function toWebVtt(cues: readonly Cue[]): string {
  const blocks = cues.map((cue, i) => {
    const [start, end] = millis(cue);
    const text = oneLine(cue.text).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
    return `${i + 1}\n${timestamp(start, '.')} --> ${timestamp(end, '.')}\n${text}\n`;
  });
  return ['WEBVTT\n', ...blocks].join('\n');
}

/** A SubRip file: cues numbered from 1, `HH:MM:SS,mmm` times, a blank line after each. */
export function toSrt(cues: readonly Cue[]): string {
  return cues
    .map((cue, i) => {
      const [start, end] = millis(cue);
      return `${i + 1}\n${timestamp(start, ',')} --> ${timestamp(end, ',')}\n${oneLine(cue.text)}\n\n`;
    })
    .join('');
}
