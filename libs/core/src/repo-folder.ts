import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A folder shipped with the code (bundled media, previews), found upward from a module's location:
 * in the sources (`libs/x/src/…`) or in the build (`dist/libs/x/src/…`), either as `fromRoot` under
 * an ancestor or as `beside` next to one. Throws naming `fromRoot` when neither exists.
 */
export function repoFolder(moduleUrl: string, fromRoot: string, beside: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let i = 0; i < 6; i++) {
    for (const candidate of [join(dir, fromRoot), join(dir, beside)]) if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`The folder ${fromRoot} was not found`);
}
