import { classifyResponse } from './retry.js';

// §6 "Retries": 2xx succeeds; 4xx other than 429 is not retried (the schedule itself: libs/queue options.spec.ts).
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
});
