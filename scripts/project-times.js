// A Jest reporter for scripts/test.sh: the time each project (unit, sqlite, postgres, s3) took in the run,
// written to the file named by PROJECT_TIMES_FILE, which test.sh prints before its closing line.
// Jest's --json results do not say which project ran a file (sqlite and postgres run the same files), the
// reporter's results do (displayName). Files of all projects interleave across the workers, so a project
// gets two figures: its span (first file's start to last file's end) and its files' durations summed.
import { writeFileSync } from 'node:fs';

const clock = (ms) => {
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
};

export default class ProjectTimes {
  onRunComplete(_testContexts, results) {
    const file = process.env.PROJECT_TIMES_FILE;
    if (!file) return;
    const projects = new Map();
    for (const result of results.testResults) {
      const { start, end } = result.perfStats ?? {};
      if (!start || !end || end < start) continue; // a file that never ran (failed to load) has no times
      const name = result.displayName?.name ?? 'jest';
      if (!projects.has(name)) projects.set(name, { files: 0, start: Infinity, end: 0, summed: 0 });
      const project = projects.get(name);
      project.files += 1;
      project.start = Math.min(project.start, start);
      project.end = Math.max(project.end, end);
      project.summed += end - start;
    }
    const ran = [...projects].sort(([a], [b]) => a.localeCompare(b));
    const width = Math.max(0, ...ran.map(([name]) => name.length));
    const lines = ran.map(([name, p]) =>
      `time ${name.padEnd(width)}  ${clock(p.end - p.start)} wall (first file start to last file end), ${clock(p.summed)} summed over ${p.files} file${p.files === 1 ? '' : 's'}`);
    writeFileSync(file, lines.map((line) => `${line}\n`).join(''));
  }
}
