/**
 * Node options every launch of the worker passes: package.json `start:worker`, scripts/up.sh and
 * docker/worker.Dockerfile (test/worker-launch.spec.ts checks each), and the benches that start a
 * worker or run the video engine as the worker does.
 *
 * V8 lets its young generation grow to two 32 MB semi-spaces, and a video render fills them: every
 * frame comes from Chromium as a base64 string of a few hundred kB. With 8 MB semi-spaces the
 * render's process tree peaks ~30 MB lower at the same CPU time, and a webhook delivery costs the same
 * worker CPU (docs/benchmarks.md "Video engine", issue 33).
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** True when this process was started with every one of WORKER_NODE_FLAGS, on its command line or in NODE_OPTIONS. */
export function startedWithWorkerFlags(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/).filter(Boolean)]);
  return WORKER_NODE_FLAGS.every((f) => given.has(f));
}
