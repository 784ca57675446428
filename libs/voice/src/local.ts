import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderError } from '#libs/integrations';
import { MAX_AUDIO_BYTES, MAX_SCRIPT_CHARS, VoiceRejected, type CharacterAllowance, type SpeechRequest, type Voice, type VoiceEngine, type VoiceModel } from './voice.js';

/**
 * The offline voice engine (`--engine local` on a voice-provider connection): Debian's espeak-ng
 * says the script, lame encodes it to MP3 (64 kbit/s mono); no account, no network, no allowance.
 * Voices are espeak-ng's languages (`espeak-ng --voices`); a voice id may carry one of its variants
 * (`en-us+klatt2`, from `espeak-ng --voices=variant`). It has one model and reads no voice settings
 * (stability, similarity and style are the ElevenLabs voices' own).
 */
export const LOCAL_VOICE_MODEL = 'espeak-ng';
/** espeak-ng's words per minute (its default is 175). */
const WORDS_PER_MINUTE = 165;
/** A fixed allowance plus a share per character: espeak-ng and lame run far faster than real time. */
const RUN_BASE_MS = 20_000;
const RUN_MS_PER_CHAR = 20;

interface Listed {
  voices: Voice[];
  variants: Set<string>;
}

function run(file: string, args: string[], timeoutMs: number, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, signal, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve(String(stdout));
      if (signal.aborted) return reject(signal.reason ?? err);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return reject(new ProviderError('unavailable', `voice-provider (offline) needs ${file}, which is not installed (Debian package ${file})`));
      const tail = String(stderr).trim().split('\n').slice(-2).join(' ');
      reject(new ProviderError('unavailable', `voice-provider (offline) ${file} failed: ${tail || err.message}`));
    });
  });
}

/** `espeak-ng --voices` rows: Pty, Language, Age/Gender, VoiceName, File, Other languages. */
export function parseEspeakVoices(listing: string): { language: string; gender: string; name: string; file: string }[] {
  return listing.split('\n').slice(1).flatMap((line) => {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5) return [];
    const [, language, ageGender, name, file] = cols as [string, string, string, string, string];
    const gender = ageGender.split('/')[1] ?? '';
    return [{ language, gender: gender === 'F' ? 'female' : gender === 'M' ? 'male' : '', name: name.replace(/_/g, ' '), file }];
  });
}

export class LocalVoiceEngine implements VoiceEngine {
  readonly defaultModel = LOCAL_VOICE_MODEL;
  private listed?: Promise<Listed>;

  constructor(private readonly binaries: { espeak?: string; lame?: string } = {}) {}

  private get espeak(): string {
    return this.binaries.espeak ?? 'espeak-ng';
  }

  private list(signal: AbortSignal): Promise<Listed> {
    this.listed ??= (async () => {
      const [languages, variants] = await Promise.all([run(this.espeak, ['--voices'], RUN_BASE_MS, signal), run(this.espeak, ['--voices=variant'], RUN_BASE_MS, signal)]);
      return {
        voices: parseEspeakVoices(languages).map((v) => ({
          id: v.language, name: v.name, category: 'offline', previewUrl: null,
          labels: { language: v.language, ...(v.gender ? { gender: v.gender } : {}), engine: 'espeak-ng' },
        })),
        variants: new Set(parseEspeakVoices(variants).map((v) => v.file.replace(/^!v\//, ''))),
      };
    })();
    this.listed.catch(() => (this.listed = undefined));
    return this.listed;
  }

  async voices(signal: AbortSignal): Promise<Voice[]> {
    return (await this.list(signal)).voices;
  }

  async models(signal: AbortSignal): Promise<VoiceModel[]> {
    const { voices } = await this.list(signal);
    return [{ id: LOCAL_VOICE_MODEL, name: 'eSpeak NG (offline)', languages: voices.map((v) => ({ id: v.id, name: v.name })), maxCharacters: MAX_SCRIPT_CHARS }];
  }

  /** No account and no allowance: every limit is null (none), and nothing is counted. */
  usage(): Promise<CharacterAllowance> {
    return Promise.resolve({ tier: 'offline', characterCount: null, characterLimit: null, charactersRemaining: null, resetsAt: null });
  }

  async speak(request: SpeechRequest, signal: AbortSignal): Promise<Buffer> {
    if (request.modelId !== null && request.modelId !== LOCAL_VOICE_MODEL) {
      throw new VoiceRejected('modelId', `The offline engine has one model, ${LOCAL_VOICE_MODEL} (got "${request.modelId}")`);
    }
    const { voices, variants } = await this.list(signal);
    const [language, variant, ...extra] = request.voiceId.split('+');
    if (!voices.some((v) => v.id === language) || extra.length || (variant !== undefined && !variants.has(variant))) {
      throw new VoiceRejected('voiceId', `The offline engine has no voice "${request.voiceId}": GET /v1/integrations/voice-provider/voices lists them (a variant may follow a "+", as in en-us+klatt2)`);
    }
    const dir = await mkdtemp(join(tmpdir(), 'voice-'));
    try {
      const script = join(dir, 'script.txt');
      const wav = join(dir, 'speech.wav');
      const mp3 = join(dir, 'speech.mp3');
      await writeFile(script, request.text);
      const timeoutMs = RUN_BASE_MS + RUN_MS_PER_CHAR * request.text.length;
      // -f: the script from a file (never an argument that could read as an option); -b 1: UTF-8.
      await run(this.espeak, ['-v', request.voiceId, '-s', String(WORDS_PER_MINUTE), '-b', '1', '-f', script, '-w', wav], timeoutMs, signal);
      await run(this.binaries.lame ?? 'lame', ['--quiet', '-m', 'm', '-b', '64', wav, mp3], timeoutMs, signal);
      if ((await stat(mp3)).size > MAX_AUDIO_BYTES) throw new ProviderError('rejected', `voice-provider (offline) wrote more than ${MAX_AUDIO_BYTES / 1024 / 1024} MB`);
      return await readFile(mp3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
