import { ApiError } from './errors.js';

/** The mode of a key, a session, and each record made through one (issue 28: test mode is a sandbox). */
export type KeyMode = 'live' | 'test';

/**
 * Test mode is a sandbox (issue 28; docs/decisions.md "Test mode"): a caller in test mode (a
 * `pk_test_` key, or a session with `X-Service-Mode: test`) may read the workspace's records but may
 * cancel, change, redeliver or delete only the records made in test mode. Live callers keep full rights.
 * `what` names the record in the message ("render", "webhook endpoint").
 */
export function assertModeMayAct(callerMode: KeyMode, recordMode: KeyMode, what: string): void {
  if (callerMode === 'test' && recordMode !== 'test') {
    throw new ApiError(
      'LIVE_MODE_REQUIRED',
      `This ${what} was made in live mode; a test key or a test-mode session may change only test-mode records. Use a live key.`,
    );
  }
}

/** The `livemode` flag events and answers carry for a record's mode. */
export function isLivemode(mode: KeyMode): boolean {
  return mode === 'live';
}
