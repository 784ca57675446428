import { assetName, tidyUploadFields, type Asset, type AssetsService } from '#libs/assets';
import { ApiError, validationFailed, type AppConfig, type KeyMode } from '#libs/core';
import { type Plan } from '#libs/workspaces';
import { ProviderError, type IntegrationsService, type UsableConnection } from '#libs/integrations';
import { ASSET_HEAD_BYTES, detectAssetType } from '#libs/media';
import type { StorageDriver } from '#libs/storage';
import { ElevenLabsEngine } from './elevenlabs.js';
import { LocalVoiceEngine } from './local.js';
import { VoiceRejected, type CharacterAllowance, type SpeechRequest, type Voice, type VoiceEngine, type VoiceModel } from './voice.js';

export interface VoiceOverInput extends SpeechRequest {
  /** The asset's name; default: the script's opening words. */
  name: string | null;
  folder: string | null;
}

export interface VoiceDeps {
  integrations: IntegrationsService;
  assets: AssetsService;
  storage: StorageDriver;
  config: Pick<AppConfig, 'env'>;
}

/** Room a voice-over needs at least: a workspace with less left is refused before the provider spends characters. */
const MIN_VOICE_BYTES = 64 * 1024;
/** Words of the script that name a voice-over by default, and their longest length. */
const NAME_WORDS = 8;
const NAME_CHARS = 60;
const RETRY_AFTER_SEC = '30';
/** The espeak-ng voice that stands in, in test mode, for a voice id espeak-ng does not have (an ElevenLabs voice's). */
const TEST_MODE_VOICE = 'en-us+klatt2';

/** The default name: the script's opening words (`Welcome to the spring sale.mp3`). */
export function voiceOverName(text: string, given: string | null): string {
  if (given?.trim()) {
    const name = assetName(given, 'voice-over.mp3');
    return /\.mp3$/i.test(name) ? name : `${name}.mp3`;
  }
  let opening = text.replace(/\p{Cc}/gu, ' ').replace(/[\\/]/g, ' ').split(/\s+/).filter(Boolean).slice(0, NAME_WORDS).join(' ');
  if (opening.length > NAME_CHARS) opening = `${opening.slice(0, NAME_CHARS).replace(/\s+\S*$/, '')}`;
  return `${opening.replace(/[.,;:!?…]+$/u, '') || 'voice-over'}.mp3`;
}

/**
 * The voice-provider routes' service (§4.5, docs/captions.md "Voice-overs"): the connection's engine
 * (ElevenLabs' API, or espeak-ng offline), its failures as house codes, and a voice-over saved to the
 * media library as an upload is (reserve under the workspace lock → stored → `asset.process`).
 */
export class VoiceService {
  private readonly local = new LocalVoiceEngine();

  constructor(private readonly deps: VoiceDeps) {}

  /** The engine of a connection: the offline one, or the ElevenLabs adapter with the connection's key and base URL. */
  engine(use: UsableConnection): VoiceEngine {
    if (use.connection.engine === 'local') return this.local;
    return new ElevenLabsEngine({ credentials: use.credentials, baseUrl: use.connection.baseUrl ?? undefined, outboundPolicy: this.deps.config.env });
  }

  /**
   * The engine that says a script (the port): the connection's in live mode; in test mode espeak-ng
   * offline (issue 28: a test key spends no characters of the provider's account and calls no
   * provider), saying it with the voice asked for when it is one of espeak-ng's, else its `en-us+klatt2` voice (the
   * clearest of its English voices to the offline caption engine, so a test voice-over can be captioned in test mode).
   */
  private speaker(use: UsableConnection, mode: KeyMode): VoiceEngine {
    if (mode === 'live' || use.connection.engine === 'local') return this.engine(use);
    const local = this.local;
    return {
      defaultModel: local.defaultModel,
      voices: (signal) => local.voices(signal),
      models: (signal) => local.models(signal),
      usage: () => local.usage(),
      speak: async (request, signal) => {
        const [language] = request.voiceId.split('+');
        const known = (await local.voices(signal)).some((v) => v.id === language);
        return local.speak({ ...request, voiceId: known ? request.voiceId : TEST_MODE_VOICE, modelId: null }, signal);
      },
    };
  }

  voices(use: UsableConnection): Promise<Voice[]> {
    return this.guard(use, this.engine(use), (engine, signal) => engine.voices(signal));
  }

  models(use: UsableConnection): Promise<VoiceModel[]> {
    return this.guard(use, this.engine(use), (engine, signal) => engine.models(signal));
  }

  usage(use: UsableConnection): Promise<CharacterAllowance> {
    return this.guard(use, this.engine(use), (engine, signal) => engine.usage(signal));
  }

  /**
   * Says the script and saves it to the media library: `processing`, its processing for the caller to
   * queue (as an upload). Refused before any provider call: a bad folder (422) or a workspace with no
   * room left (402 LIMIT_STORAGE); after it, the MP3's real size is reserved (402, nothing stored).
   */
  async speak(workspaceId: string, plan: Plan, use: UsableConnection, input: VoiceOverInput, mode: KeyMode): Promise<Asset> {
    const { fields, errors } = tidyUploadFields(input.folder === null ? {} : { folder: input.folder });
    if (Object.keys(errors).length) throw validationFailed(errors);
    const { assets, storage } = this.deps;
    const used = await assets.usedBytes(workspaceId);
    if (used + MIN_VOICE_BYTES > plan.storageBytes) {
      throw new ApiError('LIMIT_STORAGE', `The ${plan.name} plan's storage allowance is used up; delete assets or change plan before generating a voice-over`, {
        data: { limitBytes: plan.storageBytes, usedBytes: used, neededBytes: MIN_VOICE_BYTES },
      });
    }
    const mp3 = await this.guard(use, this.speaker(use, mode), (engine, signal) => engine.speak(input, signal));
    const detected = detectAssetType(mp3.subarray(0, ASSET_HEAD_BYTES));
    if (detected?.type !== 'audio' || detected.ext !== 'mp3') throw new ApiError('PROVIDER_ERROR', 'The voice provider answered something other than MP3 audio; nothing was stored');
    const row = await assets.reserve(workspaceId, plan, { mode, name: voiceOverName(input.text, input.name), type: 'audio', mimeType: detected.mimeType, ext: 'mp3', reserveBytes: mp3.length });
    try {
      const put = await storage.put(row.fileKey, mp3);
      return await assets.stored(row, put.sizeBytes, { tags: [], description: null, folder: fields.folder });
    } catch (err) {
      await assets.discard(row);
      throw err;
    }
  }

  /** One engine call with its failures as the API's answers (docs/captions.md "Voice-overs"). */
  private async guard<T>(use: UsableConnection, engine: VoiceEngine, work: (engine: VoiceEngine, signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await work(engine, new AbortController().signal);
    } catch (err) {
      if (err instanceof VoiceRejected) throw validationFailed({ [err.field]: [err.message] }, 'The voice provider refused the request');
      if (!(err instanceof ProviderError)) throw err;
      if (err.kind === 'auth') {
        await this.deps.integrations.markLapsed(use.connection.id, err.message);
        throw new ApiError('INTEGRATION_REAUTH_REQUIRED', `The voice-provider account refused this workspace's grant (${err.message}); connect it again`);
      }
      if (err.kind === 'unavailable') throw new ApiError('PROVIDER_UNAVAILABLE', `${err.message}; try again shortly`, { headers: { 'Retry-After': RETRY_AFTER_SEC } });
      throw new ApiError('PROVIDER_ERROR', err.message);
    }
  }
}
