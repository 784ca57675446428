import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { promisify } from 'node:util';

/**
 * Issue 31: the loopback fakes of providers (test/fakes, `#testing/<lib>`) are test code. The build
 * (dist/, which both images copy whole) and the repository files the images copy beside it hold none.
 * Run after `npm run build` (scripts/test.sh builds first).
 */
const ROOT = join(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');

/** Why `file` (a path under ROOT) is a fake, or null: its name, its folder, or a class named `…Fake` in it. */
function fakeMark(file: string): string | null {
  const path = relative(ROOT, file);
  if (/(^|\/)testing[\w.-]*$/.test(path)) return 'named testing*';
  if (/(^|\/)(fakes|testing)\//.test(path)) return 'under a fakes/ or testing/ folder';
  if (/\.[cm]?[jt]s$/.test(path)) {
    const name = /\bclass\s+(\w+Fake)\b/.exec(readFileSync(file, 'utf8'))?.[1];
    if (name) return `defines class ${name}`;
  }
  return null;
}

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

const fakesIn = (files: string[]) => files.flatMap((file) => {
  const mark = fakeMark(file);
  return mark ? [`${relative(ROOT, file)}: ${mark}`] : [];
});

describe('no test fake in the build or the images (issue 31: test fakes move out of the production tree)', () => {
  it('dist/ holds the build and not one fake: no testing.* file, no fakes/ folder, no class named …Fake', () => {
    // A missing or empty dist/ would pass vacuously: the API's entry point says the build ran.
    expect(existsSync(join(DIST, 'apps/api/src/main.js'))).toBe(true);
    const files = filesUnder(DIST);
    expect(files.length).toBeGreaterThan(300);
    // A file listed here whose source is gone is left from an older build (tsc never deletes): `rm -rf dist && npm run build`.
    expect(fakesIn(files)).toEqual([]);
  });

  it('the runtime stage of each image copies, besides dist/, only repository files that hold no fake', () => {
    for (const dockerfile of ['docker/api.Dockerfile', 'docker/worker.Dockerfile']) {
      const text = readFileSync(join(ROOT, dockerfile), 'utf8');
      const runtime = text.slice(text.indexOf(' AS runtime'));
      const sources = [...runtime.matchAll(/^COPY --from=build\s+(?:--\S+\s+)*(.+?)\s+\S+$/gm)]
        .flatMap((m) => m[1].split(/\s+/))
        .map((source) => source.replace(/^\/app\//, ''))
        .filter((source) => !/^(node_modules|dist|video-bundle|apps\/dashboard\/dist)$/.test(source) && existsSync(join(ROOT, source)));
      expect([dockerfile, sources.length > 0]).toEqual([dockerfile, true]);
      expect([dockerfile, sources.filter((source) => /^test(\/|$)/.test(source))]).toEqual([dockerfile, []]);
      expect([dockerfile, fakesIn(sources.flatMap((source) => filesUnder(join(ROOT, source))))]).toEqual([dockerfile, []]);
    }
  });

  it('Node loads every fake from test/fakes as the benches do (types stripped, #libs/* from dist/)', async () => {
    const names = readdirSync(join(ROOT, 'test/fakes')).filter((name) => name.endsWith('.ts')).map((name) => basename(name, '.ts'));
    expect(names).toEqual(expect.arrayContaining(['captions', 'media', 'messaging', 'suite', 'video', 'voice']));
    const script = `for (const name of ${JSON.stringify(names)}) console.log(name, Object.keys(await import('#testing/' + name)).length > 0);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(stdout.trim().split('\n')).toEqual(names.map((name) => `${name} true`));
  });
});
