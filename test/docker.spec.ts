import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { loadConfig } from '#libs/core';

const run = promisify(execFile);
const SECRETS = { APP_SECRET: 'a'.repeat(64), S3_SECRET_ACCESS_KEY: 'b'.repeat(32) };
/** What an operator sets for sign-in codes (issue 28: production does not start on the outbox). */
const TWILIO = { SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC0123', TWILIO_AUTH_TOKEN: 'tw-token', TWILIO_FROM: '+15005550006' };
const compose = (env: Record<string, string | undefined>) =>
  run('docker-compose', ['-f', 'docker/compose.yaml', 'config', '-q'], { env: { PATH: process.env.PATH, ...env } });
const resolved = async (env: Record<string, string> = {}) =>
  (await run('docker-compose', ['-f', 'docker/compose.yaml', 'config'], { env: { PATH: process.env.PATH, ...SECRETS, ...env } })).stdout;

/** One service's lines of `docker-compose config` (services sit at two spaces). */
function service(config: string, name: string): string {
  const lines = config.split('\n');
  const start = lines.indexOf(`  ${name}:`);
  if (start < 0) throw new Error(`no service ${name}`);
  const end = lines.findIndex((line, i) => i > start && /^ {0,2}\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** A service's environment (`      NAME: value` under `    environment:`). */
function environment(section: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of section.matchAll(/^ {6}([A-Z][A-Z0-9_]*): (.*)$/gm)) env[m[1]] = m[2].replace(/^'(.*)'$|^"(.*)"$/, '$1$2');
  return env;
}

// Issue: docker/ holds a compose file with PostgreSQL, Redis (noeviction, AOF), MinIO, api and a scalable worker.
describe('docker/compose.yaml', () => {
  it('is a valid compose file', async () => {
    await expect(compose(SECRETS)).resolves.toBeDefined();
  });

  it('refuses to start without APP_SECRET or the object store password', async () => {
    await expect(compose({ S3_SECRET_ACCESS_KEY: SECRETS.S3_SECRET_ACCESS_KEY })).rejects.toMatchObject({ stderr: expect.stringContaining('APP_SECRET') });
    await expect(compose({ APP_SECRET: SECRETS.APP_SECRET })).rejects.toMatchObject({ stderr: expect.stringContaining('S3_SECRET_ACCESS_KEY') });
  });

  it('runs Redis with noeviction and AOF and scales the worker', async () => {
    const stdout = await resolved({ WORKER_REPLICAS: '3' });
    expect(stdout).toMatch(/--maxmemory-policy\s*\n?\s*-?\s*noeviction/);
    expect(stdout).toContain('--appendonly');
    expect(stdout).toMatch(/replicas: 3/);
  });

  it('stores files in the MinIO bucket: API and workers share no volume, and their settings load', async () => {
    const stdout = await resolved(TWILIO);
    expect(service(stdout, 'minio')).toContain('image: quay.io/minio/minio:');
    expect(service(stdout, 'minio-init')).toContain('mc anonymous set download store/media');
    for (const name of ['api', 'worker']) {
      const section = service(stdout, name);
      expect([name, section.includes('volumes:')]).toEqual([name, false]);
      expect(section).toMatch(/minio-init:\n\s+condition: service_completed_successfully/);
      const { storage } = loadConfig({ ...environment(section), DATA_DIR: tmpdir() });
      expect([name, storage]).toEqual([name, {
        driver: 's3', endpoint: 'http://minio:9000', bucket: 'media', region: 'us-east-1', accessKeyId: 'media', secretAccessKey: SECRETS.S3_SECRET_ACCESS_KEY,
        forcePathStyle: true, publicUrl: 'http://localhost:9000/media', urlTtlSec: 604800, createBucket: false,
      }]);
    }
  });

  it('passes the Twilio variables through; in production without them the start stops naming SMS_PROVIDER, unless SIGN_IN=off (issue 28)', async () => {
    const env = (extra: Record<string, string> = {}) => async () => environment(service(await resolved(extra), 'api'));
    const configured = loadConfig({ ...(await env(TWILIO)()), DATA_DIR: tmpdir() });
    expect([configured.env, configured.signIn, configured.sms]).toEqual(['production', true, {
      provider: 'twilio', accountSid: 'AC0123', authToken: 'tw-token', from: '+15005550006', baseUrl: 'https://api.twilio.com',
    }]);
    const bare = await env()();
    expect(() => loadConfig({ ...bare, DATA_DIR: tmpdir() })).toThrow(/SMS_PROVIDER must be twilio in production/);
    expect(loadConfig({ ...(await env({ SIGN_IN: 'off' })()), DATA_DIR: tmpdir() })).toMatchObject({ signIn: false, sms: { provider: 'outbox' } });
  });
});

// The images run `npm run build`: every file of scripts/ that its steps run must be copied in first.
describe('docker/*.Dockerfile', () => {
  it('copies every scripts/ file `npm run build` runs (the dashboard\'s compression step included) before building', async () => {
    const scripts = (JSON.parse(await readFile('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    const steps = (name: string): string[] => {
      const command = scripts[name] ?? '';
      return [command, ...[...command.matchAll(/npm run (?:-s )?([\w:-]+)/g)].flatMap((m) => steps(m[1]!))];
    };
    const used = [...new Set(steps('build').flatMap((c) => [...c.matchAll(/\bscripts\/[\w.-]+/g)].map((m) => m[0])))];
    expect(used).toContain('scripts/compress-dashboard.mjs');
    for (const file of ['docker/api.Dockerfile', 'docker/worker.Dockerfile']) {
      const text = await readFile(file, 'utf8');
      const build = text.indexOf('RUN npm run build');
      for (const path of used) {
        const copied = text.search(new RegExp(`^COPY (?:${path.replace(/[.]/g, '\\.')}|scripts) `, 'm'));
        expect([file, path, copied >= 0 && copied < build]).toEqual([file, path, true]);
      }
    }
  });
});
