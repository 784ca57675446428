import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/**
 * nest-cli.json is the monorepo's map (the product's shape: apps/ and libs/ as Nest projects). Issue 31:
 * it names every library under libs/ and every Nest application, each with an entry file that exists,
 * so the map stays true when a library or an app is added.
 */
describe('nest-cli.json names every project (issue 31)', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const config = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8')) as {
    projects: Record<string, { type: string; root: string; entryFile: string; sourceRoot: string }>;
  };
  const folders = (dir: string) => readdirSync(join(root, dir), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();

  it('lists each folder under libs/ as a library, and no library that does not exist', () => {
    const listed = Object.entries(config.projects).filter(([, p]) => p.type === 'library').map(([name]) => name).sort();
    expect(listed).toEqual(folders('libs'));
  });

  it('lists the Nest applications (every app but the Vite dashboard)', () => {
    const listed = Object.entries(config.projects).filter(([, p]) => p.type === 'application').map(([name]) => name).sort();
    expect(listed).toEqual(folders('apps').filter((a) => a !== 'dashboard'));
  });

  it('points each project at its own folder and an entry file that exists', () => {
    for (const [name, p] of Object.entries(config.projects)) {
      const folder = p.type === 'library' ? 'libs' : 'apps';
      expect([name, p.root, p.sourceRoot]).toEqual([name, `${folder}/${name}`, `${folder}/${name}/src`]);
      expect([name, existsSync(join(root, p.sourceRoot, `${p.entryFile}.ts`))]).toEqual([name, true]);
    }
  });
});
