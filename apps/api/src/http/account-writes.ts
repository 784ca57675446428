import { assertModeMayAct } from '#libs/core';
import type { KeyPrincipal } from './principal.js';

/**
 * A direct write into a connected account (Sheets values and spreadsheets, Drive uploads and folders)
 * is refused in test mode, 403 LIVE_MODE_REQUIRED (docs/decisions.md "Test mode (issue 28): providers,
 * messaging, workflows"): the account is a real one, made live by the operator, and test mode never
 * writes into a real provider. What a test workflow writes is simulated instead (libs/suite simulated.ts).
 */
export function assertLiveAccountWrite(p: Pick<KeyPrincipal, 'mode'>, provider: string): void {
  assertModeMayAct(p.mode, 'live', `connected ${provider} account`);
}
