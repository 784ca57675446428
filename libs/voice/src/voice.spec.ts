import { elevenLabsModelId, houseModelId } from './elevenlabs.js';
import { parseEspeakVoices } from './local.js';
import { voiceOverName } from './voice.service.js';

describe('voice-over names', () => {
  it('default to the script\'s opening words, trailing punctuation dropped', () => {
    expect(voiceOverName('Welcome to the spring sale. Everything in the shop is half price.', null)).toBe('Welcome to the spring sale. Everything in the.mp3');
    expect(voiceOverName('Hello, world!', null)).toBe('Hello, world.mp3');
    expect(voiceOverName(`${'x'.repeat(40)} ${'y'.repeat(40)}`, null)).toBe(`${'x'.repeat(40)}.mp3`);
    expect(voiceOverName('a/b\\c\u0007d', null)).toBe('a b c d.mp3');
  });
  it('keep a given name, with .mp3 once', () => {
    expect(voiceOverName('ignored', 'Intro')).toBe('Intro.mp3');
    expect(voiceOverName('ignored', 'intro.MP3')).toBe('intro.MP3');
    expect(voiceOverName('Spoken', '   ')).toBe('Spoken.mp3');
  });
});

describe('ElevenLabs model ids', () => {
  it('are ours without "eleven_", either spelling taken', () => {
    expect(elevenLabsModelId('multilingual_v2')).toBe('eleven_multilingual_v2');
    expect(elevenLabsModelId('eleven_turbo_v2_5')).toBe('eleven_turbo_v2_5');
    expect(houseModelId('eleven_multilingual_v2')).toBe('multilingual_v2');
  });
});

describe('espeak-ng --voices', () => {
  it('reads language, gender, a spaced name and the file', () => {
    const listing = [
      'Pty Language       Age/Gender VoiceName          File                 Other Languages',
      ' 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)',
      ' 5  variant         --/F      Alicia             !v/Alicia            ',
      '',
    ].join('\n');
    expect(parseEspeakVoices(listing)).toEqual([
      { language: 'en-us', gender: 'male', name: 'English (America)', file: 'gmw/en-US' },
      { language: 'variant', gender: 'female', name: 'Alicia', file: '!v/Alicia' },
    ]);
  });
});
