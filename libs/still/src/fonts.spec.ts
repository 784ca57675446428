import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renamedFont } from '#testing/still';
import { FontCatalog } from './fonts.js';

describe('FontCatalog.install', () => {
  test('the same font installed many times at once (a PDF\'s print and its picture, two renders) is written once, every install answered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'font-install-'));
    try {
      const catalog = await FontCatalog.system(dir);
      const bytes = renamedFont();
      const installed = await Promise.all(Array.from({ length: 8 }, () => catalog.install(bytes)));
      expect(new Set(installed.map((f) => f.path)).size).toBe(1);
      expect((await readdir(dir)).filter((f) => !f.endsWith('.tmp'))).toHaveLength(1);
      expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
