import 'reflect-metadata';

// E2E tests of this project run against a fresh database per test file on the PostgreSQL server
// that scripts/test.sh started (TEST_PG_URL).
process.env.APP_ENV = 'development';
process.env.LOG_LEVEL = 'silent';
process.env.TEST_DB = 'postgres';
if (!process.env.TEST_PG_URL) throw new Error('TEST_PG_URL is not set: run the tests through `npm test`');
