import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServicesContext, ORM, PROCESS_ROLES } from '#libs/app';
import { loadConfig } from '#libs/core';

// Issue 28: "The SQLite file, its WAL and the generated secret are created readable by every local
// user (0644 in a 0755 folder): create the data folder 0700 and its files 0600."
// decisions.md "Sessions and sign-in codes (issue 28)".

describe('the data folder is this user\'s alone', () => {
  const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
  let root: string;
  let umask: number;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'mr-data-'));
    // The usual umask, under which files are made 0644 and folders 0755 unless asked otherwise.
    umask = process.umask(0o022);
  });
  afterAll(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });

  /** A process's start on DATA_DIR (development: the secret generated there, SQLite there), one write, closed. */
  async function start(dataDir: string): Promise<void> {
    const config = loadConfig({ DATA_DIR: dataDir, REDIS_URL: 'redis://127.0.0.1:1', APP_ENV: 'development' });
    const services = await createServicesContext(config, PROCESS_ROLES.cli);
    try {
      const db = services.get(ORM).em.getConnection();
      await db.execute('create table if not exists probe (x integer)');
      await db.execute('insert into probe (x) values (1)');
      // The WAL and SHM files exist while the database is open.
      expect([mode(join(dataDir, 'app.sqlite-wal')), mode(join(dataDir, 'app.sqlite-shm'))]).toEqual(['600', '600']);
    } finally {
      await services.close();
    }
  }

  it('creates the data folder 0700, the SQLite file, its WAL and SHM and the generated secret 0600', async () => {
    const dataDir = join(root, 'fresh', 'data');
    await start(dataDir);
    expect({ folder: mode(dataDir), database: mode(join(dataDir, 'app.sqlite')), secret: mode(join(dataDir, 'app-secret')) })
      .toEqual({ folder: '700', database: '600', secret: '600' });
  });

  it('tightens the database and the secret an earlier version left 0644 (a folder that exists keeps its mode)', async () => {
    const dataDir = join(root, 'fresh', 'data');
    for (const file of ['app.sqlite', 'app-secret']) chmodSync(join(dataDir, file), 0o644);
    await start(dataDir);
    expect([mode(join(dataDir, 'app.sqlite')), mode(join(dataDir, 'app-secret'))]).toEqual(['600', '600']);
  });
});
