import { onPath } from '#libs/core';
import type { IntegrationProvider } from './entities.js';

/** The programs each offline engine runs (Debian packages pocketsphinx, espeak-ng and lame). */
const OFFLINE_PROGRAMS: Partial<Record<IntegrationProvider, readonly string[]>> = {
  'speech-alpha': ['pocketsphinx_continuous'],
  'speech-beta': ['pocketsphinx_continuous'],
  'speech-gamma': ['pocketsphinx_continuous'],
  'voice-provider': ['espeak-ng', 'lame'],
};

/**
 * Whether `provider` has an offline engine (`engine: local`), and on this machine the programs it
 * runs: `available`, `missing` (naming them), or `none` (a provider without one).
 */
export function offlineEngine(provider: IntegrationProvider, has: (program: string) => boolean = (p) => !!onPath(p)): OfflineEngineState {
  const programs = OFFLINE_PROGRAMS[provider];
  if (!programs) return { state: 'none', missing: [] };
  const missing = programs.filter((p) => !has(p));
  return { state: missing.length ? 'missing' : 'available', missing };
}

export interface OfflineEngineState {
  state: 'available' | 'missing' | 'none';
  missing: string[];
}

/** Every program an offline engine runs (what a worker reports it has). */
export const OFFLINE_PROGRAM_NAMES: readonly string[] = [...new Set(Object.values(OFFLINE_PROGRAMS).flat())];
