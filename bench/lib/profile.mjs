// CPU profiles of a bench's child (node --cpu-prof): the arguments that make one, and a summary of
// where its time went (self time by package and by function, inclusive time of product functions).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './processes.mjs';

/**
 * Node arguments that write a .cpuprofile to `dir` when the process exits. --cpu-prof writes its file
 * on a normal exit only and Nest ends a SIGTERM by re-raising it: SIGUSR2 (stopChild(child,
 * { signal: 'SIGUSR2' })) ends the process with a normal exit.
 */
export function cpuProfileArgs(dir) {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import=data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))'];
}

/** A .cpuprofile file: the `top` functions and packages by self time, and product functions by inclusive time. */
export function summarizeProfile(file, top = 25) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (dt[i] ?? 0));
  const totalUs = dt.reduce((a, b) => a + b, 0);
  const where = (cf) => {
    const url = cf.url.replace(pathToFileURL(ROOT).href + '/', '').replace(/^file:\/\//, '');
    return url ? `${url}:${cf.lineNumber + 1}` : '';
  };
  const pkg = (cf) => {
    const u = cf.url;
    if (!u) return cf.functionName.startsWith('(') ? cf.functionName : '(native/builtin)';
    if (u.startsWith('node:')) return 'node: core';
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    if (m) return m[1];
    const d = /\/dist\/((?:apps|libs)\/[^/]+)/.exec(u);
    return d ? d[1] : u;
  };
  const fn = new Map();
  const pk = new Map();
  for (const [id, us] of self) {
    const n = byId.get(id);
    const cf = n.callFrame;
    const key = `${cf.functionName || '(anonymous)'} ${where(cf)}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    pk.set(pkg(cf), (pk.get(pkg(cf)) ?? 0) + us);
  }
  // Inclusive time of a few product frames, through the call tree (children ids).
  const parents = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  const inclusive = new Map();
  for (const [id, us] of self) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parents.get(cur)) {
      const cf = byId.get(cur).callFrame;
      if (!/\/dist\/(apps|libs)\//.test(cf.url) || !cf.functionName) continue;
      const key = `${cf.functionName} ${where(cf)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const rank = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([name, us]) => ({ name, ms: Math.round(us / 1000), pct: Math.round((1000 * us) / totalUs) / 10 }));
  return { file, totalMs: Math.round(totalUs / 1000), selfByFunction: rank(fn), selfByPackage: rank(pk), inclusiveProduct: rank(inclusive) };
}

/** The newest .cpuprofile written to `dir` since `since` (ms), summarized. */
export function profileSummary(dir, since) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= since).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!files.length) return { error: `no .cpuprofile written to ${dir}` };
  return summarizeProfile(files[0]);
}

/** Prints a profileSummary() under `title`. */
export function printProfile(profile, title) {
  if (profile.error) {
    console.log(`profile: ${profile.error}`);
    return;
  }
  console.log(`\n${title} CPU profile ${profile.file} (${profile.totalMs} ms sampled)`);
  console.log('self time by package:');
  for (const x of profile.selfByPackage.slice(0, 12)) console.log(`  ${String(x.pct).padStart(5)} %  ${x.name}`);
  console.log('self time by function:');
  for (const x of profile.selfByFunction.slice(0, 20)) console.log(`  ${String(x.pct).padStart(5)} %  ${x.name}`);
  console.log('inclusive time of product functions (synchronous stacks only: time after an await is not counted):');
  for (const x of profile.inclusiveProduct.slice(0, 15)) console.log(`  ${String(x.pct).padStart(5)} %  ${x.name}`);
}
