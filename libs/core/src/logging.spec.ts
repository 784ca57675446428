import { AppLogger, scrubSecrets, withLogContext, addLogContext } from './logging.js';

/** What `fn` writes to stdout and stderr, as lines. */
function written(fn: () => void): string[] {
  const out: string[] = [];
  const [o, e] = [process.stdout.write.bind(process.stdout), process.stderr.write.bind(process.stderr)];
  const capture = (chunk: unknown) => (out.push(String(chunk)), true);
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  try {
    fn();
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
  return out.join('').split('\n').filter(Boolean);
}

describe('logs that follow a render (issue 30)', () => {
  it('masks what looks like a secret: keys, bearer tokens, signing secrets, Google tokens, codes', () => {
    const text = scrubSecrets('key pk_live_AbCdEf1234567890 auth Bearer eyJhbGciOi.JIUzI1NiJ9 hook whsec_0123456789abcdef google ya29.a0AfB_byC1234 1//0gAbCdEfGhIjKl code=123456 "apiKey": "sk-abc123xyz"');
    for (const secret of ['AbCdEf1234567890', 'eyJhbGciOi', '0123456789abcdef', 'a0AfB_byC1234', '0gAbCdEfGhIjKl', '123456', 'sk-abc123xyz']) expect([secret, text.includes(secret)]).toEqual([secret, false]);
    expect(text).toContain('pk_live_[redacted]');
    expect(scrubSecrets('render rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P done in 120 ms')).toBe('render rnd_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P done in 120 ms');
  });

  it('a JSON line carries the ids of its context, the render\'s added once known; a sibling context does not see them', () => {
    const logger = new AppLogger({ json: true, logLevels: ['log', 'warn', 'error'] });
    const lines = written(() => {
      withLogContext({ requestId: 'req_1' }, () => {
        addLogContext({ renderId: 'rnd_1' });
        logger.log('accepted with pk_test_AbCdEf1234567890', 'renders');
      });
      withLogContext({ jobId: '7', queue: 'stills' }, () => logger.warn('drawn'));
    });
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ level: 'log', context: 'renders', requestId: 'req_1', renderId: 'rnd_1', message: 'accepted with pk_test_[redacted]' });
    expect(second).toMatchObject({ level: 'warn', jobId: '7', queue: 'stills' });
    expect(second!.renderId).toBeUndefined();
  });

  it('a text line starts with its context\'s ids', () => {
    const logger = new AppLogger({ json: false, logLevels: ['log'] });
    const [line] = written(() => withLogContext({ renderId: 'rnd_2' }, () => logger.log('settled', 'renders')));
    expect(line).toMatch(/\[rnd_2\] settled/);
  });
});
