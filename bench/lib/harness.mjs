// The harness every bench/*.mjs runs in, and its one import surface. A bench declares its flags and
// what it measures; runBench does the rest:
//   - flags `--name value` or `--name=value`, checked (bad flag or value: message, exit 64),
//     `--json` for every bench, `-h`/`--help` prints the usage generated from the declarations;
//   - cleanup of whatever the run started (processes.mjs) on exit, on error (exit 1) and on
//     SIGINT/SIGTERM/SIGHUP (exit 130);
//   - the output: one JSON object with --json, else the bench's summary then its figure line
//     `<name>: …` last.
// BENCH_DEBUG=1 adds the error's stack and the children's output to a failure report.
import { spawn } from 'node:child_process';
import { ROOT, childOutputs, cleanup, installCleanupHandlers, interrupted, log } from './processes.mjs';

export * from './processes.mjs';
export * from './stack.mjs';
export * from './measure.mjs';
export * from './profile.mjs';

// --- flag values --------------------------------------------------------------------------------
// Each takes (the flag's text, the flag's name) and returns the value or throws.

const numeric = (ok, what) => (v, name) => {
  const n = Number(v);
  if (v === '' || !ok(n)) throw new Error(`--${name} must be ${what} (got "${v}")`);
  return n;
};
/** A number >= min. */
export const number = (min) => numeric((n) => Number.isFinite(n) && n >= min, `a number >= ${min}`);
/** A number >= min, rounded down. */
export const floored = (min) => (v, name) => Math.floor(number(min)(v, name));
/** A number > 0. */
export const positive = numeric((n) => Number.isFinite(n) && n > 0, 'a number > 0');
/** An integer >= min. */
export const integer = (min) => numeric((n) => Number.isInteger(n) && n >= min, `an integer >= ${min}`);
/** One of the given words. */
export const oneOf = (...words) => (v, name) => {
  if (!words.includes(v)) throw new Error(`--${name} must be ${words.slice(0, -1).join(', ')} or ${words.at(-1)} (got "${v}")`);
  return v;
};

/**
 * `flags`: { name: { arg, default, parse, help } }. A flag without `arg` is a switch (false, or true
 * when given); one with `arg` takes a value, turned by `parse` (default: the text as given).
 */
export function usage(name, flags, footer) {
  const rows = Object.entries(flags).map(([flag, f]) => [`--${flag}${f.arg ? ` ${f.arg}` : ''}`, f.help ?? '']);
  const width = Math.max(...rows.map(([left]) => left.length));
  return [`Usage: node bench/${name}.mjs [options]`, ...rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`), ...(footer ? [footer] : [])].join('\n');
}

export function parseFlags(argv, flags, usageText) {
  const opts = Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, f.arg ? f.default : false]));
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '-h' || argv[i] === '--help') {
      console.log(usageText);
      process.exit(0);
    }
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const name = flag.startsWith('--') ? flag.slice(2) : null;
    const f = name !== null && Object.hasOwn(flags, name) ? flags[name] : null;
    if (!f) throw new Error(`Unknown option ${argv[i]}\n${usageText}`);
    if (!f.arg) {
      opts[name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      value = argv[++i];
    }
    opts[name] = f.parse ? f.parse(value, name) : value;
  }
  return opts;
}

/**
 * Runs this bench again in a child process started with the Node options `flags`, unless `present`
 * (this process already has them): for a bench that runs, in its own process, what a worker runs
 * with those options. The parent waits for the child (a Ctrl-C reaches both; the child cleans up),
 * passes SIGTERM on and exits with the child's code. Returns true in the parent, which does nothing more.
 */
export function rerunWithNodeFlags(flags, present) {
  if (present) return false;
  const child = spawn(process.execPath, [...flags, ...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit' });
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
  return true;
}

/**
 * Runs one bench: `run(opts)` measures and returns the result (any temp dir, child or clean-up step
 * it registers is given back before the output); `check(opts)` may refuse a combination of flags
 * (exit 64); `summary(result, opts)` prints the human-readable lines; `figure(result, opts)` returns
 * the last line's text after `<name>: ` (or null: no figure line). `jsonIndent` formats --json.
 */
export async function runBench({ name, flags, footer, check, run, summary, figure, jsonIndent }) {
  const all = { ...flags, json: { help: 'print one JSON object instead of the text' } };
  const usageText = usage(name, all, footer);
  let opts;
  try {
    opts = parseFlags(process.argv.slice(2), all, usageText);
    check?.(opts);
  } catch (err) {
    console.error(err.message);
    process.exit(64);
  }
  installCleanupHandlers();
  if (Number(process.versions.node.split('.')[0]) < 24) {
    log(`warning: running on Node ${process.version}; the project needs Node 24 (export PATH=${ROOT}/node_modules/.bin:$PATH)`);
  }
  let result;
  try {
    result = await run(opts);
  } catch (err) {
    if (interrupted()) return; // the signal handler cleans up and exits 130
    console.error(`[bench] FAILED: ${err.message}`);
    if (process.env.BENCH_DEBUG) console.error(`${err.stack}\n${childOutputs()}`);
    await cleanup();
    process.exit(1);
  }
  if (interrupted()) return;
  await cleanup();
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(result, null, jsonIndent)}\n`);
  } else {
    summary?.(result, opts);
    const line = figure(result, opts);
    if (line !== null) console.log(`${name}: ${line}`);
  }
  // A bench that judges its run (soak) says whether the line was met: `exitCode` of its result.
  process.exit(Number.isInteger(result?.exitCode) ? result.exitCode : 0);
}
