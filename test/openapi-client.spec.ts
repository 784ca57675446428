import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// Issue 21 (decisions.md "OpenAPI"): a typed client generated from the committed openapi.json with
// openapi-typescript, driven by openapi-fetch as the README shows, submits a render, polls it and reads
// data.url, strict and without a single cast. A route whose answer lacks its schema leaves `data`
// untyped and this program does not compile.

/** A program as a user writes it, reading the render's fields typed (the README's example is checked too). */
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths, 'application/json'>({ baseUrl: 'http://127.0.0.1:3000/api', headers: { 'x-api-key': 'pk_test_example' } });

export async function renderAndWait(): Promise<string> {
  const edit = { timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'Hello' }, start: 0, length: 5 }] }] }, output: { format: 'mp4' } };
  const created = await client.POST('/v1/render', { body: { edit, metadata: { order: 7 } }, params: { header: { 'Idempotency-Key': 'order-7' } } });
  if (created.error) throw new Error(\`\${created.error.code}: \${created.error.message}\`);
  let render = created.data.data;
  while (render.status !== 'done') {
    if (render.status === 'failed' || render.status === 'cancelled') throw new Error(render.error?.message ?? render.status);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const polled = await client.GET('/v1/render/{id}', { params: { path: { id: render.id } } });
    if (polled.error) throw new Error(polled.error.message);
    render = polled.data.data;
  }
  const credits: number = render.credits;
  const url: string | null = render.url;
  if (url === null) throw new Error(\`render \${render.id} is done without a url (\${credits} credits)\`);
  return url;
}

export async function firstPage(): Promise<number> {
  const list = await client.GET('/v1/render', { params: { query: { limit: 20 } } });
  if (list.error) throw new Error(list.error.message);
  return list.data.pagination.total + list.data.data.length;
}
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'], types: [],
    skipLibCheck: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true,
  },
  files: ['client.ts', 'readme.ts'],
};

/** Generates the client types from `doc` and type-checks PROGRAM against them; tsc's output ('' when clean). */
async function typeCheck(dir: string, doc: object): Promise<string> {
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  await run(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', join(dir, 'openapi.json'), '-o', join(dir, 'api.d.ts')]);
  try {
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', dir]);
    return '';
  } catch (err) {
    return String((err as { stdout?: string }).stdout);
  }
}

/** The README's example ("A typed TypeScript client"), as a module; `process` declared (no Node types here). */
function readmeExample(): string {
  const readme = readFileSync('README.md', 'utf8');
  const block = /A typed TypeScript client[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no TypeScript client example');
  return `declare const process: { env: Record<string, string | undefined> };\n${block.replace(/^ {2}/gm, '')}\nexport {};\n`;
}

describe('a client generated from openapi.json (issue 21)', () => {
  // Inside the repository, so that the program finds openapi-fetch in node_modules.
  const dir = mkdtempSync(join(process.cwd(), '.openapi-client-'));
  const doc = JSON.parse(readFileSync('openapi.json', 'utf8')) as { paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>> };
  beforeAll(() => {
    writeFileSync(join(dir, 'client.ts'), PROGRAM);
    writeFileSync(join(dir, 'readme.ts'), readmeExample());
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('submits a render, polls it and reads data.url: strict, no cast (and so does the README\'s example)', async () => {
    expect(await typeCheck(dir, doc)).toBe('');
  }, 30_000);

  it('does not compile when GET /v1/render/{id} documents no answer schema', async () => {
    const broken = structuredClone(doc);
    delete broken.paths['/v1/render/{id}']!.get!.responses['200']!.content;
    expect(await typeCheck(dir, broken)).toMatch(/client\.ts\(\d+,\d+\): error TS/);
  }, 30_000);
});
