#!/usr/bin/env node
// The offline speech engine (libs/captions LocalSpeechEngine: the shipped ffmpeg decodes, Debian's
// pocketsphinx recognises, words parsed and shaped): about 60 s of speech synthesised once by
// espeak-ng (known phrases), then, alternately, the engine on it and pocketsphinx_continuous alone
// with its default settings on the same 16 kHz WAV (the baseline). Prints wall-clock and CPU
// real-time factors (seconds of work per second of audio; target <= 0.5 on one core), the
// engine/baseline ratio, and both word error rates. Runs dist/ (npm run -s build first). Usage:
//   node bench/captions-engine.mjs [--rounds 3] [--format wav|mp3] [--json]
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_MODEL_DIR, LocalSpeechEngine } from '../dist/libs/captions/src/local.js';
import { parseSphinxWords } from '../dist/libs/captions/src/sphinx-words.js';
import { synthesizeSpeech, wordErrorRate } from '#testing/captions-speech';
import { busyBeforeLoad, integer, log, machine, median, oneOf, procStat, runBench, tempDir } from './lib/harness.mjs';

const TARGET_RTF = 0.5;

// 20 everyday sentences, ~46 s of speech at 165 words a minute, 0.75 s apart: ~62 s in all.
const PHRASES = [
  'The quick brown fox jumps over the lazy dog.', 'Please call me tomorrow morning.', 'We will meet at the station at seven.',
  'The weather will be sunny and warm this afternoon.', 'I would like a cup of coffee with milk.', 'The children are playing in the garden.',
  'Our company reported higher sales this year.', 'She opened the window to let in some fresh air.', 'The train to London leaves in ten minutes.',
  'He bought a new car last week.', 'Thank you very much for your help.', 'The meeting has been moved to Friday afternoon.',
  'We need to finish the report before noon.', 'The restaurant on the corner serves good food.', 'My brother lives in a small house near the river.',
  'Please turn off the lights when you leave the room.', 'The museum is open every day except Monday.', 'They are going to visit their parents next month.',
  'It is important to drink enough water every day.', 'The price of oil went up again today.',
];
const SETTINGS = { languageCode: 'en-US', alternativeLanguageCodes: [], model: null, diarize: false, keywords: [], punctuation: false, filterProfanity: false };

/** CPU seconds of this process and of its children that have ended (waited for), from /proc. */
function cpuSec() {
  const f = procStat('self');
  return f ? (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100 : null;
}

async function timed(fn) {
  const cpu = cpuSec();
  const started = performance.now();
  const value = await fn();
  return { value, wallSec: (performance.now() - started) / 1000, cpuSec: cpu === null ? null : cpuSec() - cpu };
}

/** pocketsphinx_continuous alone, every search setting at its default: its standard output. */
function bareSphinx(wav) {
  return new Promise((resolve, reject) => {
    const child = spawn('pocketsphinx_continuous', [
      '-infile', wav, '-time', 'yes',
      '-hmm', join(LOCAL_MODEL_DIR, 'en-us'), '-lm', join(LOCAL_MODEL_DIR, 'en-us.lm.bin'), '-dict', join(LOCAL_MODEL_DIR, 'cmudict-en-us.dict'),
    ], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`pocketsphinx_continuous exit code ${code}`))));
  });
}

async function run(args) {
  const speech = await synthesizeSpeech(PHRASES, { dir: tempDir('captions-engine'), gapSec: 0.75, mp3: args.format === 'mp3' });
  const reference = PHRASES.join(' ');
  const durationSec = speech.durationSec;
  const file = args.format === 'mp3' ? speech.mp3Path : speech.path;
  const audio = { path: file, format: args.format, kind: 'audio', mime: `audio/${args.format === 'mp3' ? 'mpeg' : 'wav'}`, sizeBytes: statSync(file).size, durationSec };
  log(`${durationSec.toFixed(1)} s of speech (${PHRASES.length} phrases); engine on the ${args.format}, baseline on the 16 kHz WAV; ${args.rounds} round(s)`);
  const engine = new LocalSpeechEngine();
  const never = new AbortController().signal;
  const busyBefore = await busyBeforeLoad();
  const base = [];
  const ours = [];
  for (let round = 0; round < args.rounds; round++) {
    const b = await timed(() => bareSphinx(speech.path));
    base.push({ ...b, wer: wordErrorRate(reference, parseSphinxWords(b.value).map((w) => w.word).join(' ')) });
    const e = await timed(() => engine.transcribe(audio, SETTINGS, never));
    ours.push({ ...e, wer: wordErrorRate(reference, e.value.words.map((w) => w.word).join(' ')) });
    log(`round ${round + 1}: baseline ${b.wallSec.toFixed(2)} s wall ${b.cpuSec?.toFixed(2)} s CPU, engine ${e.wallSec.toFixed(2)} s wall ${e.cpuSec?.toFixed(2)} s CPU`);
  }
  const figures = (runs) => ({
    wallRtf: median(runs.map((r) => r.wallSec)) / durationSec,
    cpuRtf: runs[0].cpuSec === null ? null : median(runs.map((r) => r.cpuSec)) / durationSec,
    wer: runs[0].wer,
  });
  const baseline = figures(base);
  const engineFigures = figures(ours);
  return {
    ...machine(),
    audioSec: durationSec,
    format: args.format,
    rounds: args.rounds,
    busyBeforePct: busyBefore,
    baseline,
    engine: engineFigures,
    wallRatio: engineFigures.wallRtf / baseline.wallRtf,
    cpuRatio: engineFigures.cpuRtf === null ? null : engineFigures.cpuRtf / baseline.cpuRtf,
    targetRtf: TARGET_RTF,
  };
}

const rtf = (f) => `RTF ${f.wallRtf.toFixed(3)} wall, ${f.cpuRtf === null ? 'n/a' : f.cpuRtf.toFixed(3)} CPU, WER ${f.wer.toFixed(3)}`;

await runBench({
  name: 'captions-engine',
  flags: {
    rounds: { arg: 'N', default: 3, parse: integer(1), help: 'engine and baseline runs, alternated; medians reported (default 3)' },
    format: { arg: 'F', default: 'wav', parse: oneOf('wav', 'mp3'), help: 'what the engine is given: the 16 kHz WAV or an MP3 of it made by lame (default wav)' },
  },
  run,
  summary: (r) => {
    console.log(`baseline, pocketsphinx_continuous with its defaults on the WAV: ${rtf(r.baseline)}`);
    console.log(`engine, LocalSpeechEngine on the ${r.format.toUpperCase()}:${' '.repeat(28 - r.format.length)}${rtf(r.engine)}`);
  },
  figure: (r) => `engine RTF ${r.engine.wallRtf.toFixed(3)} wall / ${r.engine.cpuRtf?.toFixed(3)} CPU (target <= ${TARGET_RTF}), ` +
    `${r.wallRatio.toFixed(2)} x the baseline's wall time (${r.cpuRatio?.toFixed(2)} x its CPU); WER ${r.engine.wer.toFixed(3)} vs baseline ${r.baseline.wer.toFixed(3)}`,
});
