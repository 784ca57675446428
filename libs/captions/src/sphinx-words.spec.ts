import { maskProfanity, parseSphinxWords, shapeWords } from './sphinx-words.js';
import type { RecognizedWord } from './speech.js';

// pocketsphinx_continuous -time yes: each utterance's hypothesis, then its segments.
const OUTPUT = `the way out of pocket
<s> 0.000 0.020 0.999500
the 0.030 0.100 0.124290
<sil> 0.110 0.210 0.535116
way 0.220 0.360 0.238290
[NOISE] 0.370 0.570 0.995609
out 0.580 0.730 1.000100
of(2) 0.740 0.810 0.068432
pocket 0.820 1.140 0.002956
</s> 1.150 1.190 0.965408
we will
<s> 3.020 3.100 0.999500
we 3.110 3.260 0.999500
will 3.270 3.470 0.948469
</s> 3.480 3.600 1.000000
`;

const word = (w: string, start: number, end: number): RecognizedWord => ({ word: w, start, end, confidence: 0.5, speaker: null });

describe('parseSphinxWords', () => {
  it('keeps the words with their times and confidence, drops markers and fillers, strips variant numbers', () => {
    expect(parseSphinxWords(OUTPUT)).toEqual([
      { word: 'the', start: 0.03, end: 0.1, confidence: 0.12429, speaker: null },
      { word: 'way', start: 0.22, end: 0.36, confidence: 0.23829, speaker: null },
      { word: 'out', start: 0.58, end: 0.73, confidence: 1, speaker: null },
      { word: 'of', start: 0.74, end: 0.81, confidence: 0.068432, speaker: null },
      { word: 'pocket', start: 0.82, end: 1.14, confidence: 0.002956, speaker: null },
      { word: 'we', start: 3.11, end: 3.26, confidence: 0.9995, speaker: null },
      { word: 'will', start: 3.27, end: 3.47, confidence: 0.948469, speaker: null },
    ]);
  });

  it('finds no words in silence or in an empty output', () => {
    expect(parseSphinxWords('')).toEqual([]);
    expect(parseSphinxWords('\n<s> 0.000 0.500 1.000000\n</s> 0.510 0.900 1.000000\n')).toEqual([]);
  });
});

describe('shapeWords', () => {
  const words = [word('i', 0, 0.2), word("i'm", 0.3, 0.5), word('fine', 0.6, 1), word('then', 2.1, 2.4), word('it', 2.5, 2.6), word('is', 3.6, 3.8)];

  it('leaves words bare without punctuation', () => {
    expect(shapeWords(words, { punctuation: false, filterProfanity: false })).toEqual(words);
  });

  it('with punctuation: a full stop before a silence over one second and at the end, a capital after it, the pronoun I', () => {
    expect(shapeWords(words, { punctuation: true, filterProfanity: false }).map((w) => w.word)).toEqual(['I', "I'm", 'fine.', 'Then', 'it', 'is.']);
    expect(shapeWords([], { punctuation: true, filterProfanity: false })).toEqual([]);
  });

  it('with filterProfanity: masks the listed swear words, keeping their first letter and length', () => {
    const rude = [word('oh', 0, 0.1), word('shit', 0.2, 0.4), word('fucking', 0.5, 0.7), word('hell', 0.8, 0.9), word('cock', 1, 1.1)];
    expect(shapeWords(rude, { punctuation: false, filterProfanity: true }).map((w) => w.word)).toEqual(['oh', 's***', 'f******', 'hell', 'cock']);
    expect(shapeWords(rude, { punctuation: true, filterProfanity: true }).map((w) => w.word)).toEqual(['Oh', 's***', 'f******', 'hell', 'cock.']);
    expect(shapeWords(rude, { punctuation: false, filterProfanity: false }).map((w) => w.word)).toEqual(['oh', 'shit', 'fucking', 'hell', 'cock']);
    expect(maskProfanity('Bullshit')).toBe('B*******');
  });
});
