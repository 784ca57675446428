/** Injection tokens of the worker's infrastructure: libs/app's, under the names the processors use. */
export { APP_CONFIG as WORKER_CONFIG, ORM, REDIS, STORAGE } from '#libs/app';
