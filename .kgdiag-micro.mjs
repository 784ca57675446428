// temporary diagnostic (removed after use): times the keyed path's pieces in-process
import 'reflect-metadata';
import { loadConfig } from '#libs/core';
import { openDatabase } from '#libs/db';
import { KeysService, KeyAuthenticator, RequestMeter, ApiKey } from '#libs/keys';
import { createRedis, RedisKeys } from '#libs/redis';
const config = loadConfig();
const orm = await openDatabase(config.database);
const redis = createRedis(config, 'diag');
const rk = new RedisKeys(config.redisPrefix);
const keys = new KeysService(orm, redis, rk, config);
const auth = new KeyAuthenticator(orm, redis, rk, keys);
const meter = new RequestMeter(redis, rk, config.rateLimitMultiplier);
const raw = process.env.KEY;
const entry = await auth.lookup(auth.hash(raw));
async function time(name, n, conc, fn) {
  for (let i = 0; i < 2000; i++) await fn();
  const t0 = process.hrtime.bigint(); const c0 = process.cpuUsage();
  let left = n;
  await Promise.all(Array.from({ length: conc }, async () => { while (left-- > 0) await fn(); }));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6; const cu = process.cpuUsage(c0);
  console.log(`${name.padEnd(44)} conc ${String(conc).padStart(2)}: ${(n / ms * 1000).toFixed(0).padStart(7)} ops/s  cpu ${((cu.user + cu.system) / n).toFixed(1)} µs/op`);
}
const N = 20000;
await time('hash (HMAC-SHA256)', N, 1, async () => auth.hash(raw));
await time('authenticator.lookup (cache hit)', N, 1, () => auth.lookup(auth.hash(raw)));
await time('meter.count (EVALSHA, autopipelined)', N, 1, () => meter.count(entry));
await time('meter.count (EVALSHA, autopipelined)', N, 16, () => meter.count(entry));
await time('redis.get (baseline round trip)', N, 16, () => redis.get('x'));
await time('keys.findById (em.fork().findOne)', 5000, 1, () => keys.findById(entry.workspaceId, entry.keyId));
await time('keys.findById (em.fork().findOne)', 5000, 16, () => keys.findById(entry.workspaceId, entry.keyId));
const knex = orm.em.getConnection();
await time('raw SQL via connection.execute', 5000, 1, () => knex.execute('select * from api_key where id = ? and workspace_id = ? limit 1', [entry.keyId, entry.workspaceId]));
await time('em.fork() alone', 20000, 1, async () => orm.em.fork());
await time('em.fork().findOne (second call same id)', 5000, 1, async () => { const em = orm.em.fork(); await em.findOne(ApiKey, { id: entry.keyId }); });
await orm.close(true); redis.disconnect();
