import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cutCues, toSrt, toWebVtt, transcriptText, type Cue } from './cues.js';
import type { RecognizedWord } from './speech.js';

// Contract §4.3 (wordsPerCue, charsPerCue, maxCueSec) and §8 (wordsPerCue 1 to 12, default 4).

/** Words of `text` spoken one after another: each `len` seconds long, `gap` seconds apart (binary fractions: exact sums). */
function spoken(text: string, { from = 0, len = 0.25, gap = 0.125, speaker = null as number | null } = {}): RecognizedWord[] {
  return text.split(' ').map((word, i) => ({ word, start: from + i * (len + gap), end: from + i * (len + gap) + len, confidence: 0.9, speaker }));
}

const texts = (cues: Cue[]) => cues.map((c) => c.text);
const word = (w: string, start: number, end: number, speaker: number | null = null): RecognizedWord => ({ word: w, start, end, confidence: 1, speaker });

describe('cutCues', () => {
  it('cuts every four words by default, each cue from its first word start to its last word end', () => {
    const cues = cutCues(spoken('one two three four five six seven eight nine'));
    expect(texts(cues)).toEqual(['one two three four', 'five six seven eight', 'nine']);
    expect(cues.map((c) => [c.start, c.end])).toEqual([[0, 1.375], [1.5, 2.875], [3, 3.25]]);
    expect(cues[1]!.words.map((w) => w.word)).toEqual(['five', 'six', 'seven', 'eight']);
    expect(cues[2]!.words).toEqual([{ word: 'nine', start: 3, end: 3.25, confidence: 0.9, speaker: null }]);
  });

  it('takes wordsPerCue from 1 to 12 and refuses other values', () => {
    const words = spoken('a b c d e f g h i j k l m n');
    expect(texts(cutCues(words, { wordsPerCue: 1 }))).toHaveLength(14);
    expect(texts(cutCues(words, { wordsPerCue: 12 }))).toEqual(['a b c d e f g h i j k l', 'm n']);
    for (const wordsPerCue of [0, 13, 2.5, Number.NaN]) expect(() => cutCues(words, { wordsPerCue })).toThrow(/wordsPerCue must be an integer from 1 to 12/);
    expect(() => cutCues(words, { charsPerCue: 0 })).toThrow(RangeError);
    expect(() => cutCues(words, { maxCueSec: 0 })).toThrow(RangeError);
  });

  it('ends a cue before a word that would take it past charsPerCue (42 by default); a text of exactly the limit stays one cue', () => {
    // 10 + 1 + 10 + 1 + 10 + 1 + 9 = 42 characters: one cue; one character more: two.
    const exact = spoken('abcdefghij abcdefghij abcdefghij abcdefghi');
    expect(texts(cutCues(exact))).toEqual(['abcdefghij abcdefghij abcdefghij abcdefghi']);
    const over = spoken('abcdefghij abcdefghij abcdefghij abcdefghij');
    expect(texts(cutCues(over))).toEqual(['abcdefghij abcdefghij abcdefghij', 'abcdefghij']);
    expect(texts(cutCues(spoken('aa bb cc dd ee'), { charsPerCue: 5, wordsPerCue: 12 }))).toEqual(['aa bb', 'cc dd', 'ee']);
  });

  it('gives a word longer than charsPerCue a cue of its own, never split', () => {
    const cues = cutCues(spoken('a Pneumonoultramicroscopicsilicovolcanoconiosis b c'), { charsPerCue: 20 });
    expect(texts(cues)).toEqual(['a', 'Pneumonoultramicroscopicsilicovolcanoconiosis', 'b c']);
  });

  it('ends a cue before a word that would hold it longer than maxCueSec (6 by default); exactly the limit stays', () => {
    const slow = [word('one', 0, 2), word('two', 2, 4), word('three', 4, 6), word('four', 6, 6.5)];
    expect(texts(cutCues(slow))).toEqual(['one two three', 'four']);
    const exact = [word('one', 0, 2), word('two', 2, 4), word('three', 4, 5.5), word('four', 5.5, 6)];
    expect(texts(cutCues(exact))).toEqual(['one two three four']);
    expect(texts(cutCues(spoken('a b c d'), { maxCueSec: 0.625 }))).toEqual(['a b', 'c d']);
  });

  it('gives a word held longer than maxCueSec a cue of its own', () => {
    const cues = cutCues([word('so', 0, 0.2), word('hmmmmm', 0.3, 8), word('yes', 8.1, 8.4)]);
    expect(texts(cues)).toEqual(['so', 'hmmmmm', 'yes']);
    expect(cues[1]).toMatchObject({ start: 0.3, end: 8 });
  });

  it('ends a cue after a word that ends a sentence (. ? ! …, closing quotes allowed)', () => {
    expect(texts(cutCues(spoken('Hi. How are you? Fine! Well… "Really?" yes'), { wordsPerCue: 12 }))).toEqual([
      'Hi.', 'How are you?', 'Fine!', 'Well…', '"Really?"', 'yes',
    ]);
    expect(texts(cutCues(spoken('version 2.5 is out'), { wordsPerCue: 12 }))).toEqual(['version 2.5 is out']);
  });

  it('ends a cue before a pause over one second; a pause of exactly one second does not', () => {
    const words = [word('before', 0, 0.5), word('after', 1.51, 2), word('same', 3, 3.5), word('cue', 4.5, 5)];
    expect(texts(cutCues(words))).toEqual(['before', 'after same cue']);
  });

  it('ends a cue where the speaker changes (diarized words)', () => {
    const words = [...spoken('hello there', { speaker: 1 }), ...spoken('hi', { from: 0.75, speaker: 2 }), ...spoken('how are you', { from: 1.125, speaker: 1 })];
    const cues = cutCues(words);
    expect(texts(cues)).toEqual(['hello there', 'hi', 'how are you']);
    expect(cues.map((c) => c.words[0]!.speaker)).toEqual([1, 2, 1]);
  });

  it('takes words in order of their start, drops empty ones and makes each cue text one line with single spaces', () => {
    const words = [word('world', 0.5, 0.9), word('  ', 0.2, 0.3), word('hello\n', 0, 0.4), word('new  york', 1, 1.5)];
    const cues = cutCues(words);
    expect(texts(cues)).toEqual(['hello world new york']);
    expect(cues[0]!.words.map((w) => w.word)).toEqual(['hello', 'world', 'new york']);
    expect(words[2]!.word).toBe('hello\n'); // the input is not changed
  });

  it('gives no cues for no words, and one cue for one word', () => {
    expect(cutCues([])).toEqual([]);
    expect(cutCues([word('alone', 1, 1.4)])).toEqual([{ start: 1, end: 1.4, text: 'alone', words: [word('alone', 1, 1.4)] }]);
  });
});

describe('transcriptText', () => {
  it('joins every word in order with single spaces', () => {
    expect(transcriptText([word('world.', 0.5, 0.9), word('Hello', 0, 0.4), word(' ', 1, 1.1), word('Bye', 2, 2.2)])).toBe('Hello world. Bye');
    expect(transcriptText([])).toBe('');
  });
});

const sample: Cue[] = [
  { start: 0, end: 1.2345, text: 'Fish & chips <cheap>', words: [] },
  { start: 2, end: 2, text: 'a --> b', words: [] },
  { start: 3723.0004, end: 3725.9996, text: 'an hour later', words: [] },
];

describe('toWebVtt and toSrt', () => {
  it('write WebVTT: the header, numbered cues, HH:MM:SS.mmm, escaped text, no arrow in a text, zero-length cues made 1 ms', () => {
    expect(toWebVtt(sample)).toBe(
      'WEBVTT\n\n' +
        '1\n00:00:00.000 --> 00:00:01.235\nFish &amp; chips &lt;cheap&gt;\n\n' +
        '2\n00:00:02.000 --> 00:00:02.001\na -&gt; b\n\n' +
        '3\n01:02:03.000 --> 01:02:06.000\nan hour later\n',
    );
  });

  it('write SubRip: numbered cues, HH:MM:SS,mmm, a blank line after each', () => {
    expect(toSrt(sample)).toBe(
      '1\n00:00:00,000 --> 00:00:01,235\nFish & chips <cheap>\n\n' +
        '2\n00:00:02,000 --> 00:00:02,001\na -> b\n\n' +
        '3\n01:02:03,000 --> 01:02:06,000\nan hour later\n\n',
    );
  });

  it('write hours past 99 and empty files', () => {
    expect(toSrt([{ start: 360000.5, end: 360001, text: 'late', words: [] }])).toBe('1\n100:00:00,500 --> 100:00:01,000\nlate\n\n');
    expect(toWebVtt([])).toBe('WEBVTT\n');
    expect(toSrt([])).toBe('');
  });

  // Outside readers of both files: Debian's python3-webvtt (webvtt-py) and python3-srt, installed
  // for the tests by scripts/services.sh. Each must read back exactly our cues.
  it('are read back by webvtt-py and srt as the same cues', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cues-'));
    try {
      const cues = cutCues([
        ...spoken('Good morning everyone. Today we talk about fish & chips, <b> tags and arrows --> like this.', { from: 0.25 }),
        word('Later.', 4000, 4000),
      ]);
      await writeFile(join(dir, 'x.vtt'), toWebVtt(cues));
      await writeFile(join(dir, 'x.srt'), toSrt(cues));
      const script = [
        'import html, json, sys, webvtt, srt',
        // webvtt-py gives a cue's text as written; a player shows it with its character references resolved.
        'vtt = [[c.start, c.end, html.unescape(c.text)] for c in webvtt.read(sys.argv[1])]',
        'subs = [[str(s.start), str(s.end), s.content] for s in srt.parse(open(sys.argv[2]).read())]',
        'print(json.dumps({"vtt": vtt, "srt": subs}))',
      ].join('\n');
      const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', script, join(dir, 'x.vtt'), join(dir, 'x.srt')]);
      const read = JSON.parse(stdout) as { vtt: string[][]; srt: string[][] };
      const clock = (sec: number) => new Date(Math.round(sec * 1000)).toISOString().slice(11, 23);
      const texts = cues.map((c) => c.text);
      expect(texts).toEqual(['Good morning everyone.', 'Today we talk about', 'fish & chips, <b>', 'tags and arrows -->', 'like this.', 'Later.']);
      expect(read.vtt).toEqual(cues.map((c, i) => [clock(c.start), clock(i === cues.length - 1 ? c.end + 0.001 : c.end), c.text.replaceAll('-->', '->')]));
      // srt's timedelta: H:MM:SS[.ffffff]
      const delta = (sec: number) => {
        const ms = Math.round(sec * 1000);
        const whole = `${Math.floor(ms / 3_600_000)}:${String(Math.floor(ms / 60_000) % 60).padStart(2, '0')}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}`;
        return ms % 1000 ? `${whole}.${String(ms % 1000).padStart(3, '0')}000` : whole;
      };
      expect(read.srt).toEqual(cues.map((c, i) => [delta(c.start), delta(i === cues.length - 1 ? c.end + 0.001 : c.end), c.text.replaceAll('-->', '->')]));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
