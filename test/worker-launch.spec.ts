import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startedWithWorkerFlags, WORKER_NODE_FLAGS } from '../apps/worker/src/node-flags.js';

// Issue 33 (video peak RSS ≤ 1.5 GB): the worker's Node options (apps/worker/src/node-flags.ts) are
// passed by every way an operator starts it, and do what they are there for.

const SCRIPT = 'dist/apps/worker/src/main.js';

/** The arguments between `node` and the worker's script in a launch line. */
function nodeArgsBefore(line: string): string[] {
  const words = line.trim().split(/\s+/);
  const at = words.indexOf(SCRIPT);
  expect(at).toBeGreaterThan(0);
  return words.slice(words.indexOf('node') + 1, at);
}

/** The young generation's size, in MB, after a process allocated ~60 MB of objects that live a while. */
function youngGenerationMB(flags: readonly string[]): number {
  const program = `let keep = []; for (let i = 0; i < 200000; i++) { keep.push({ a: 'x'.repeat(100) + i, b: [i, i] }); if (keep.length > 20000) keep = []; }
    const s = require('v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); console.log(s.space_size);`;
  const run = spawnSync(process.execPath, [...flags, '-e', program], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  expect(run.status).toBe(0);
  return Number(run.stdout.trim()) / 1024 / 1024;
}

describe('the worker\'s Node options', () => {
  it('are passed by npm run start:worker, scripts/up.sh and the worker image', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(nodeArgsBefore(pkg.scripts['start:worker']!)).toEqual(WORKER_NODE_FLAGS);
    const up = readFileSync('scripts/up.sh', 'utf8').split('\n').filter((l) => l.includes(SCRIPT));
    expect(up).toHaveLength(1);
    expect(nodeArgsBefore(up[0]!)).toEqual(WORKER_NODE_FLAGS);
    const cmd = readFileSync('docker/worker.Dockerfile', 'utf8').split('\n').filter((l) => l.startsWith('CMD '));
    expect(cmd).toHaveLength(1);
    expect(JSON.parse(cmd[0]!.slice(4))).toEqual(['node', ...WORKER_NODE_FLAGS, SCRIPT]);
  });

  it('and by the benches that start a worker or run the video engine as the worker does', () => {
    for (const file of ['bench/lib/stack.mjs', 'bench/soak.mjs', 'bench/video-render.mjs']) {
      expect({ file, uses: readFileSync(file, 'utf8').includes('WORKER_NODE_FLAGS') }).toEqual({ file, uses: true });
    }
  });

  it('cap the young generation: 2 × 8 MB semi-spaces against the 2 × 32 MB V8 grows to without them', () => {
    expect(youngGenerationMB(WORKER_NODE_FLAGS)).toBeLessThanOrEqual(16);
    expect(youngGenerationMB([])).toBeGreaterThan(32);
    // (V8 grows it with what survives a scavenge: the program keeps 20,000 objects at a time.)
  });

  it('are recognised on the command line or in NODE_OPTIONS (the worker says at start when they are missing)', () => {
    expect(startedWithWorkerFlags([...WORKER_NODE_FLAGS], '')).toBe(true);
    expect(startedWithWorkerFlags([], ` ${WORKER_NODE_FLAGS.join(' ')} --enable-source-maps`)).toBe(true);
    expect(startedWithWorkerFlags(['--enable-source-maps'], '')).toBe(false);
    expect(startedWithWorkerFlags(['--max-semi-space-size=32'], '')).toBe(false);
  });
});
