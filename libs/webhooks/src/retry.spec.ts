import { classifyResponse, MAX_ATTEMPTS, nextDelay, nextStep, RETRY_DELAYS_MS } from './retry.js';

// §6 "Retries": 2xx within 10 s, else retried after 1, 4, 9, 16 s, 5 attempts; 4xx other than 429 not retried.
describe('retry policy', () => {
  it.each([
    [200, 'success'], [201, 'success'], [204, 'success'], [299, 'success'],
    [301, 'retry'], [302, 'retry'], [304, 'retry'], [307, 'retry'],
    [400, 'fail'], [401, 'fail'], [403, 'fail'], [404, 'fail'], [410, 'fail'], [422, 'fail'], [429, 'retry'], [499, 'fail'],
    [500, 'retry'], [502, 'retry'], [503, 'retry'], [504, 'retry'],
    [100, 'retry'], [0, 'retry'], [600, 'retry'],
  ])('classifies status %i as %s', (status, outcome) => {
    expect(classifyResponse(status)).toBe(outcome);
    expect(classifyResponse({ status })).toBe(outcome);
  });

  it('retries timeouts and connection errors, and ends on a refusal (SSRF)', () => {
    expect(classifyResponse({ error: 'timeout' })).toBe('retry');
    expect(classifyResponse({ error: 'connection' })).toBe('retry');
    expect(classifyResponse({ error: 'refused' })).toBe('fail');
  });

  it('waits 1, 4, 9 and 16 seconds and stops after the fifth attempt', () => {
    expect(RETRY_DELAYS_MS).toEqual([1000, 4000, 9000, 16000]);
    expect(MAX_ATTEMPTS).toBe(5);
    expect([1, 2, 3, 4, 5].map(nextDelay)).toEqual([1000, 4000, 9000, 16000, null]);
    expect(nextDelay(0)).toBeNull();
    expect(nextDelay(6)).toBeNull();
  });

  it('turns an outcome and attempt into the next step', () => {
    expect(nextStep('success', 5)).toEqual({ kind: 'success' });
    expect(nextStep('retry', 1)).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(nextStep('retry', 4)).toEqual({ kind: 'retry', delayMs: 16000 });
    expect(nextStep('retry', 5)).toEqual({ kind: 'fail' });
    expect(nextStep('fail', 1)).toEqual({ kind: 'fail' });
  });
});
