import 'reflect-metadata';

// E2E tests of this project run against SQLite files made per test file (see test/harness.ts).
process.env.APP_ENV = 'development';
process.env.LOG_LEVEL = 'silent';
process.env.TEST_DB = 'sqlite';
