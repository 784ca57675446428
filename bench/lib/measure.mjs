// Figures: medians and quantiles, and the machine's state from Linux /proc (CPU steal, how busy the
// machine was before the load, a process's CPU time). The /proc readers give null elsewhere.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { log, sleep } from './processes.mjs';

/** When and where a result was measured (the first fields of a bench's JSON). */
export function machine() {
  return { date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null };
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The value at rank floor(q × n) of the sorted values (q = 0.5: the upper median). */
export function quantile(values, q) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** Aggregate CPU counters from /proc/stat (user nice system idle iowait irq softirq steal …). */
export function cpuTimes() {
  try {
    return readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
}

function deltas(before, after, fields) {
  if (!before || !after || after.length < fields) return null;
  const d = after.map((v, i) => v - (before[i] ?? 0));
  const total = d.reduce((a, b) => a + b, 0);
  return total > 0 ? { d, total } : null;
}

/** Share (%) of the machine's CPU time stolen by the hypervisor between two cpuTimes() readings. */
export function stealPct(before, after) {
  const x = deltas(before, after, 8);
  return x ? Math.round((1000 * x.d[7]) / x.total) / 10 : null;
}

/** Share (%) of the machine's CPU time not idle (steal included) between two cpuTimes() readings. */
export function busyPct(before, after) {
  const x = deltas(before, after, 5);
  return x ? Math.round((1000 * (x.total - x.d[3] - x.d[4])) / x.total) / 10 : null;
}

/**
 * How busy the machine is (%) over one second while the bench's processes idle: other work skews the
 * figures, so 15 % or more is warned about.
 */
export async function busyBeforeLoad() {
  const before = cpuTimes();
  await sleep(1000);
  const busy = busyPct(before, cpuTimes());
  if (busy !== null && busy >= 15) {
    log(`warning: ${busy} % of the CPU was busy before the load started (other processes); figures will be noisy`);
  }
  return busy;
}

/** The fields of /proc/<pid>/stat after the command name (index 0: state, 1: ppid, 11/12: utime/stime, 19: start time), or null. */
export function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** User + system CPU clock ticks (USER_HZ, 100 a second) a process has used so far, or null. */
export function procCpuTicks(pid) {
  const f = procStat(pid);
  return f ? Number(f[11]) + Number(f[12]) : null;
}

/** One autocannon load (run inside the bench process), resolved with its result. */
export async function cannon(opts) {
  const { default: autocannon } = await import('autocannon');
  return new Promise((res, rej) => {
    autocannon({ pipelining: 1, ...opts }, (err, result) => (err ? rej(err) : res(result)));
  });
}

/** Rounds of one HTTP target as one figure: medians, totals, each round's req/s (`digits` kept), the worst CPU steal. */
export function combineRuns(runs, digits = 0) {
  return {
    reqPerSec: median(runs.map((r) => r.reqPerSec)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    total: runs.reduce((n, r) => n + r.total, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    rounds: runs.map((r) => Number(r.reqPerSec.toFixed(digits))),
    stealPct: runs.some((r) => r.stealPct === null) ? null : Math.max(...runs.map((r) => r.stealPct)),
  };
}
