import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Issue 31: "no import cycles between the libraries". The graph of libs/: an edge a → b for each
 * `#libs/b` that a source file of libs/a imports (its specs aside: a lib's tests may reach further).
 * A cycle fails with its path; libs/core, which every library imports, imports none of them.
 */
const ROOT = join(import.meta.dirname, '..');
const LIBS = readdirSync(join(ROOT, 'libs'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();

function importsOf(lib: string): string[] {
  const found = new Set<string>();
  const dir = join(ROOT, 'libs', lib);
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!/\.tsx?$/.test(file) || /\.spec\.tsx?$/.test(file) || file.split('/').includes('node_modules')) continue;
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'#libs\/([\w-]+)'/g)) {
      if (m[1] !== lib) found.add(m[1]);
    }
  }
  return [...found].sort();
}

/** Every cycle met by a depth-first walk, as `a → b → … → a`. */
function cycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const found: string[] = [];
  const walk = (lib: string) => {
    state.set(lib, 'open');
    path.push(lib);
    for (const next of graph.get(lib) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) walk(next);
    }
    path.pop();
    state.set(lib, 'done');
  };
  for (const lib of graph.keys()) if (!state.has(lib)) walk(lib);
  return found;
}

describe('the libraries import each other one way (issue 31)', () => {
  const graph = new Map(LIBS.map((lib) => [lib, importsOf(lib)]));

  it('reads imports of libraries (the walk sees the graph, so the checks below can fail)', () => {
    expect(graph.get('renders')).toEqual(expect.arrayContaining(['core', 'db', 'workspaces']));
    expect([...graph.values()].flat().every((lib) => LIBS.includes(lib))).toBe(true);
  });

  it('has no import cycle between libraries', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('libs/core imports no other library', () => {
    expect(graph.get('core')).toEqual([]);
  });
});
