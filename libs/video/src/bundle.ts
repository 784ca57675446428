import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The composition's sources (libs/video/remotion, *.tsx) are not compiled by `npm run build`: the
 * Remotion bundler (rspack) compiles them, with the edit-spec math they import, into a static site
 * that every render loads as its `serveUrl`. This finds those sources from the source tree or from
 * dist/ (the Docker image copies them beside dist/), and builds or reuses the bundle.
 */

const here = dirname(fileURLToPath(import.meta.url));

/** The repository (or image) root: libs/video/src → ../../.., dist/libs/video/src → ../../../.. */
export function projectRoot(): string {
  for (const up of ['../../..', '../../../..']) {
    const root = resolve(here, up);
    if (existsSync(join(root, 'libs/video/remotion/index.tsx'))) return root;
  }
  throw new Error(`the video composition sources (libs/video/remotion) are not beside ${here}`);
}

/** Every file the bundle is made of, for its cache key: the composition, props, the text block view and the edit-spec math. */
async function sourceFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  for (const dir of ['libs/video/remotion', 'libs/edit-spec/src']) {
    for (const name of (await readdir(join(root, dir))).sort()) {
      if (/\.tsx?$/.test(name) && !name.endsWith('.spec.ts')) files.push(join(root, dir, name));
    }
  }
  files.push(join(root, 'libs/video/src/props.ts'), join(root, 'libs/video/src/css.ts'), join(root, 'libs/video/src/text-view.ts'), join(root, 'libs/core/src/errors.ts'));
  return files;
}

/** Identity of a bundle: Remotion's version and the content of every source file. */
export async function bundleKey(root = projectRoot()): Promise<string> {
  const require = createRequire(import.meta.url);
  const remotion = (JSON.parse(await readFile(require.resolve('remotion/package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256').update(`remotion ${remotion}\n`);
  for (const file of await sourceFiles(root)) hash.update(file.slice(root.length)).update('\0').update(await readFile(file)).update('\0');
  return hash.digest('hex').slice(0, 32);
}

const KEY_FILE = '.video-bundle-key';

/** True when `dir` holds a complete bundle (index.html and bundle.js). */
export function isBundle(dir: string): boolean {
  return existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'bundle.js'));
}

/**
 * The bundle in `dir`, built when it is missing or was made from other sources (the key file tells).
 * Built into a temporary sibling folder and renamed into place, so a half-written bundle is never
 * used and two workers starting together do not mix their files. About 3–4 s with rspack.
 */
export async function ensureBundle(dir: string, opts: { onProgress?: (percent: number) => void } = {}): Promise<{ dir: string; built: boolean; ms: number }> {
  const started = performance.now();
  const root = projectRoot();
  const key = await bundleKey(root);
  const current = await readFile(join(dir, KEY_FILE), 'utf8').catch(() => undefined);
  if (current?.trim() === key && isBundle(dir)) return { dir, built: false, ms: performance.now() - started };

  const { bundle } = await import('@remotion/bundler');
  const temp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  await mkdir(dirname(dir), { recursive: true });
  try {
    await bundle({
      entryPoint: join(root, 'libs/video/remotion/index.tsx'),
      rspack: true,
      outDir: temp,
      rootDir: root,
      // No public folder: media are served per render by the engine's loopback server.
      publicDir: join(root, 'libs/video/remotion/public'),
      enableCaching: false,
      ignoreRegisterRootWarning: true,
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      rspackOverride: (config) => ({
        ...config,
        resolve: {
          ...config.resolve,
          alias: {
            ...(config.resolve?.alias as Record<string, string>),
            // The package.json `imports` map points at dist/; the page needs the TypeScript sources.
            // Of libs/core the edit-spec uses only ApiError (errors.ts imports nothing).
            '#libs/edit-spec$': join(root, 'libs/edit-spec/src/index.ts'),
            '#libs/core$': join(root, 'libs/core/src/errors.ts'),
          },
          // NodeNext sources import './x.js' for './x.ts'.
          extensionAlias: { '.js': ['.ts', '.tsx', '.js'] },
        },
      }),
    });
    await writeFile(join(temp, KEY_FILE), key);
    await rm(dir, { recursive: true, force: true });
    await rename(temp, dir);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    // Another process may have put an identical bundle in place meanwhile.
    const now = await readFile(join(dir, KEY_FILE), 'utf8').catch(() => undefined);
    if (now?.trim() === key && isBundle(dir)) return { dir, built: false, ms: performance.now() - started };
    throw err;
  }
  return { dir, built: true, ms: performance.now() - started };
}
