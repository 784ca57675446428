// Jest 30 on Node's ESM loader (Nest 12 is ESM-only): run through `npm run test:jest`.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^#libs/(.*)$': '<rootDir>/libs/$1/src/index.ts',
    '^#testing/(.*)$': '<rootDir>/test/fakes/$1.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: '<rootDir>/test/setup/node-environment.mjs',
};

// The e2e files run again on the S3 storage driver (project `s3`): not all of them (the suite's time),
// those whose subject is stored files: render outputs of stills (sync and worker), the retention
// sweeper, a chunked video rendered by two workers that share only Redis, the database and the bucket,
// the media library (uploads streamed into the bucket, processing reading them back), and the
// template library (stock pictures by id, previews by key: a restart re-signs no stored URL).
const ON_S3 = ['renders', 'stills', 'video-chunks', 'assets', 'template-library'].map((name) => `<rootDir>/test/${name}.e2e-spec.ts`);

// These e2e files run on PostgreSQL only (the production database), not again on SQLite (the suite's time,
// docs/decisions.md "Test suite time"): their subject is a browser, an engine or a decoder, and the store
// under them only records what the engine did, through the code every other file runs on both:
// the dashboard driven in Chromium, the browser engine's confinement (hostile-browser), HEIF decoding, hostile
// fonts parsed and refused, a test render's offline captions in a video; the 3-minute soak (bench/soak.mjs: its
// own processes on the production stack, a run too long to repeat; project `alone` below runs it). Files whose subject is queries,
// transactions, locking, credits or isolation stay on both.
const POSTGRES_ONLY = ['dashboard', 'hostile-browser', 'heif', 'hostile-fonts', 'test-mode-providers-video', 'soak'].map((name) => `<rootDir>/test/${name}.e2e-spec.ts`);

// Project `alone`: files that judge latency over time and so must not share the machine with other test
// files (the 3-minute soak compares its first and last tenth's still median: a Chromium-heavy neighbour in
// one tenth and not the other failed CI twice, 2026-11-28 and 2026-11-29). scripts/test.sh runs it after
// the other four projects, by itself (`--selectProjects alone`); on PostgreSQL, so not in `postgres` too.
const ALONE = ['soak'].map((name) => `<rootDir>/test/${name}.e2e-spec.ts`);

export default {
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'], setupFiles: ['<rootDir>/test/setup/unit.ts'] },
    { ...common, displayName: 'sqlite', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'], testPathIgnorePatterns: POSTGRES_ONLY, setupFiles: ['<rootDir>/test/setup/sqlite.ts'] },
    { ...common, displayName: 'postgres', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'], testPathIgnorePatterns: ALONE, setupFiles: ['<rootDir>/test/setup/postgres.ts'] },
    { ...common, displayName: 's3', testMatch: ON_S3, setupFiles: ['<rootDir>/test/setup/postgres.ts', '<rootDir>/test/setup/s3.ts'] },
    { ...common, displayName: 'alone', testMatch: ALONE, setupFiles: ['<rootDir>/test/setup/postgres.ts'] },
  ],
};
