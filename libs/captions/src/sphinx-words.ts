import type { RecognizedWord } from './speech.js';

/**
 * The offline engine's words: pocketsphinx_continuous's `-time yes` output parsed, then shaped for
 * captions (the profanity mask, full stops at long pauses). Pure, so each rule is tested alone.
 */

/** One line of `-time yes` output: `word start end confidence` (seconds from the file's start). */
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/;
/** Sentence and silence markers (`<s>`, `</s>`, `<sil>`) and noise fillers (`[NOISE]`, `[SPEECH]`, `++UH++`). */
const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+)$/;
/** An alternate pronunciation's suffix in the dictionary: `the(2)`. */
const VARIANT = /\(\d+\)$/;

/**
 * The words of pocketsphinx_continuous's standard output with `-time yes`: each utterance's
 * hypothesis line, then one line per word segment. Fillers are dropped and variant suffixes
 * stripped; confidence (the word's posterior) is kept within 0–1.
 */
export function parseSphinxWords(stdout: string): RecognizedWord[] {
  const words: RecognizedWord[] = [];
  for (const line of stdout.split('\n')) {
    const m = WORD_LINE.exec(line.trim());
    if (!m || FILLER.test(m[1]!)) continue;
    const word = m[1]!.replace(VARIANT, '');
    if (!word) continue;
    words.push({ word, start: Number(m[2]), end: Number(m[3]), confidence: Math.min(1, Math.max(0, Number(m[4]))), speaker: null });
  }
  return words.sort((a, b) => a.start - b.start);
}

/**
 * Common English swear words the language model can produce, masked by `filterProfanity` the way
 * the cloud providers do it (first letter kept, the rest as `*`). A fixed list: it masks these
 * words and their listed forms, nothing it does not name; words with innocent senses as common as
 * the rude one (cock, dick, the damned) are left out.
 */
export const PROFANITIES: ReadonlySet<string> = new Set([
  'arse', 'arsehole', 'asshole', 'assholes', 'bastard', 'bastards', 'bitch', 'bitches', 'bitching', 'bollocks', 'bullshit',
  'crap', 'crappy', 'cunt', 'cunts', 'damn', 'fag', 'faggot', 'fags',
  'fuck', 'fucked', 'fucker', 'fuckers', 'fucking', 'fucks', 'goddamn', 'motherfucker', 'motherfuckers', 'motherfucking',
  'nigger', 'niggers', 'piss', 'pissed', 'prick', 'pricks', 'pussy', 'shit', 'shits', 'shitty', 'slut', 'sluts',
  'twat', 'wanker', 'wankers', 'whore', 'whores',
]);

/** `fuck` → `f***`; any other word as it is. */
export function maskProfanity(word: string): string {
  return PROFANITIES.has(word.toLowerCase()) ? word[0] + '*'.repeat(word.length - 1) : word;
}

/** A silence longer than this (seconds) after a word ends its sentence when punctuation is on. */
export const SENTENCE_PAUSE_SEC = 1;

/** `i`, `i'm`, `i'll`, `i'd`, `i've`: the pronoun, capitalised with punctuation on. */
const PRONOUN_I = /^i(?='|$)/;

const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * Words as captions show them. pocketsphinx gives lower-case words without punctuation; with
 * `punctuation` on, a word followed by a silence over SENTENCE_PAUSE_SEC (and the last word) gets a
 * full stop, the next word a capital, and the pronoun `I` its capital. With `filterProfanity` on,
 * PROFANITIES are masked.
 */
export function shapeWords(words: readonly RecognizedWord[], opts: { punctuation: boolean; filterProfanity: boolean }): RecognizedWord[] {
  return words.map((w, i) => {
    let word = opts.filterProfanity ? maskProfanity(w.word) : w.word;
    if (opts.punctuation) {
      const previous = words[i - 1];
      const next = words[i + 1];
      if (!previous || w.start - previous.end > SENTENCE_PAUSE_SEC) word = capitalised(word);
      word = word.replace(PRONOUN_I, 'I');
      if (!next || next.start - w.end > SENTENCE_PAUSE_SEC) word += '.';
    }
    return { ...w, word };
  });
}
