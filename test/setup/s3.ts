// The `s3` jest project: the storage-heavy e2e files again, their files in a bucket of the tests' S3
// server (s3rver, started by scripts/test.sh) instead of DATA_DIR/files; on PostgreSQL, a fleet's database.
process.env.TEST_STORAGE = 's3';
if (!process.env.TEST_S3_URL) throw new Error('TEST_S3_URL is not set: run the tests through `npm test`');
