/**
 * The management CLI (decisions.md): `npm run -s cli -- <command> [--flags]`.
 * Prints exactly one JSON object on stdout and exits 0, or `{ "error": { code, message } }` and exits 1.
 */
import 'reflect-metadata';
import { runCommand } from './run.js';

const { code, output } = await runCommand(process.argv.slice(2));
process.stdout.write(`${JSON.stringify(output)}\n`);
if (code !== 0) process.exitCode = code;
