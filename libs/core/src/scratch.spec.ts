import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { makeOwnScratch, ownScratch, processAlive, sweepScratch } from './scratch.js';

// Issue 27: a killed worker's work folders are removed by the next worker of the machine; a live
// worker's never (decisions.md "Hostile input (issue 27): outbound").
describe('scratch folders of worker processes', () => {
  let base: string;
  beforeEach(() => (base = mkdtempSync(join(tmpdir(), 'scratch-spec-'))));
  afterEach(() => rmSync(base, { recursive: true, force: true }));
  const folder = (name: string) => {
    mkdirSync(join(base, name, 'render-abc'), { recursive: true });
    writeFileSync(join(base, name, 'render-abc', 'clip.mp4'), 'x');
    return join(base, name);
  };

  it('removes the folders of dead processes of this host and of a dead predecessor with this pid; keeps its own, live processes\', other hosts\' and unknown ones', async () => {
    const dead = spawnSync('true').pid!; // a pid that has exited
    expect(processAlive(dead)).toBe(false);
    const live = spawn('sleep', ['30']);
    try {
      const own = await makeOwnScratch(base);
      writeFileSync(join(own, 'in-use'), 'x');
      const leftovers = [folder(`${hostname()}-${dead}-0badf00d`), folder(`${hostname()}-${process.pid}-00000000`)];
      const kept = [own, folder(`${hostname()}-${live.pid}-1234abcd`), folder(`other-host-${dead}-0badf00d`), folder('bundle'), folder(`${hostname()}-${dead}`)];
      expect((await sweepScratch(base)).sort()).toEqual(leftovers.sort());
      for (const f of leftovers) expect(existsSync(f)).toBe(false);
      for (const f of kept) expect(existsSync(f)).toBe(true);
      expect(existsSync(join(own, 'in-use'))).toBe(true);
      expect(basename(ownScratch(base))).toMatch(new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-${process.pid}-[0-9a-f]{8}$`));
    } finally {
      live.kill();
    }
  });

  it('refuses to work in its folder when someone left a link there in its place', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'scratch-spec-target-'));
    try {
      symlinkSync(elsewhere, ownScratch(base));
      await expect(makeOwnScratch(base)).rejects.toThrow(/not a folder of this process's user/);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('answers nothing for a base that does not exist', async () => {
    expect(await sweepScratch(join(base, 'none'))).toEqual([]);
  });
});
