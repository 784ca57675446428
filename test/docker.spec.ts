import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const compose = (env: Record<string, string | undefined>) =>
  run('docker-compose', ['-f', 'docker/compose.yaml', 'config', '-q'], { env: { PATH: process.env.PATH, ...env } });

// Issue: docker/ holds a compose file with PostgreSQL, Redis (noeviction, AOF), api and a scalable worker.
describe('docker/compose.yaml', () => {
  it('is a valid compose file', async () => {
    await expect(compose({ APP_SECRET: 'a'.repeat(64) })).resolves.toBeDefined();
  });

  it('refuses to start without APP_SECRET', async () => {
    await expect(compose({})).rejects.toMatchObject({ stderr: expect.stringContaining('APP_SECRET') });
  });

  it('runs Redis with noeviction and AOF and scales the worker', async () => {
    const { stdout } = await run('docker-compose', ['-f', 'docker/compose.yaml', 'config'], {
      env: { PATH: process.env.PATH, APP_SECRET: 'a'.repeat(64), WORKER_REPLICAS: '3' },
    });
    expect(stdout).toMatch(/--maxmemory-policy\s*\n?\s*-?\s*noeviction/);
    expect(stdout).toContain('--appendonly');
    expect(stdout).toMatch(/replicas: 3/);
  });
});
