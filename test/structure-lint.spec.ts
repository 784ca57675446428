import { readdirSync } from 'node:fs';
import { ESLint, Linter } from 'eslint';

// Issue 31: "The ESLint rule that keeps libraries reached only through `#libs/<name>` covers all 25
// libraries". The rule as eslint.config.js resolves it for a file, run on imports that climb into each lib.
const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname });
const LIBS = readdirSync(new URL('../libs', import.meta.url), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();

/** The `no-restricted-imports` setting ESLint applies to `file`, run alone on `code`: the messages' lines. */
async function restricted(file: string, code: string): Promise<number[]> {
  const config = (await eslint.calculateConfigForFile(file)) as Linter.Config;
  const rule = config.rules?.['no-restricted-imports'];
  expect(rule).toBeDefined();
  const messages = new Linter().verify(code, [{ files: ['**/*.ts'], languageOptions: { sourceType: 'module' }, rules: { 'no-restricted-imports': rule } }], file);
  expect(messages.filter((m) => m.ruleId !== 'no-restricted-imports')).toEqual([]);
  return messages.map((m) => m.line);
}
const lines = (imports: string[]) => imports.map((from, i) => `import x${i} from '${from}';`).join('\n');
const all = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('eslint.config.js: libraries are reached only through #libs/<name>', () => {
  it.each(LIBS)('refuses a relative import that climbs into libs/%s from another lib', async (lib) => {
    const other = LIBS.find((name) => name !== lib)!;
    expect(await restricted(`libs/${other}/src/probe.ts`, lines([`../../${lib}/src/index.js`, `../../../${lib}/src/x/y.js`]))).toEqual(all(2));
    expect(await restricted(`libs/${other}/src/deep/probe.ts`, lines([`../../../${lib}/src/index.js`]))).toEqual(all(1));
  });

  it.each(LIBS)('refuses a relative import that climbs into libs/%s from an app or from test/', async (lib) => {
    expect(await restricted('apps/api/src/probe.ts', lines([`../../../libs/${lib}/src/index.js`]))).toEqual(all(1));
    expect(await restricted('test/probe.spec.ts', lines([`../libs/${lib}/src/index.js`]))).toEqual(all(1));
  });

  it('lets a lib import its own files and other libs through #libs/<name>', async () => {
    expect(await restricted('libs/video/src/chunks/probe.ts', lines(['./a.js', '../b.js', '../chunks/c.js', '#libs/core', '#libs/still', 'node:fs']))).toEqual([]);
  });
});

describe('eslint.config.js: apps/worker imports no ORM, no Redis client and no Lua (issue 31)', () => {
  it('refuses @mikro-orm, ioredis and #libs/db in the worker, and lets the API keep them', async () => {
    const code = lines(['@mikro-orm/core', 'ioredis', '#libs/db', '#libs/renders', '@nestjs/bullmq']);
    expect(await restricted('apps/worker/src/processors/probe.ts', code)).toEqual(all(3));
    expect(await restricted('apps/api/src/probe.ts', code)).toEqual([]);
  });

  it('refuses a Redis script call in the worker', async () => {
    const config = (await eslint.calculateConfigForFile('apps/worker/src/probe.ts')) as Linter.Config;
    const rule = config.rules?.['no-restricted-syntax'];
    expect(rule).toBeDefined();
    const messages = new Linter().verify("redis.eval('return 1', 0);\nredis.get('k');", [{ files: ['**/*.ts'], rules: { 'no-restricted-syntax': rule } }], 'apps/worker/src/probe.ts');
    expect(messages.map((m) => m.line)).toEqual([1]);
  });
});
