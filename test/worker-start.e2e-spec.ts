import { spawn } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, type TestApi } from './harness.js';

// README "VIDEO_ENGINE": `on` fails the worker's start without a video engine. A browser that is
// there but will not launch (found by the check, failing as it starts) must stop the worker with an
// error too, not leave one that takes stills and answers 503 for every video.

describe('a worker with VIDEO_ENGINE=on whose browser will not launch (README)', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  it('exits 1 saying why, within a minute', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'broken-browser-'));
    const browser = join(dir, 'chromium');
    await writeFile(browser, '#!/bin/sh\necho "chromium: cannot open shared object file" >&2\nexit 127\n');
    await chmod(browser, 0o755);
    const env = { ...process.env, ...api.env, VIDEO_ENGINE: 'on', BROWSER_EXECUTABLE: browser, LOG_LEVEL: 'warn', WORKER_METRICS_PORT: '0' };
    const child = spawn(process.execPath, ['dist/apps/worker/src/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(timer);
    expect({ code, said: /VIDEO_ENGINE=on but the video engine did not start/.test(output) }).toEqual({ code: 1, said: true });
  }, 120_000);
});
