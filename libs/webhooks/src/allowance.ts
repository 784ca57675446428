import type { Redis } from 'ioredis';

/**
 * Takes deliveries from a workspace's monthly allowance, all or nothing per event, in order.
 * KEYS: the month's counter. ARGV: limit, then the size of each event (its subscribed endpoints).
 * Returns -1 when the counter is missing (the caller seeds it from the database), else a 0/1 per event.
 */
const TAKE_SCRIPT = `
local used = redis.call('GET', KEYS[1])
if not used then return -1 end
used = tonumber(used)
local limit = tonumber(ARGV[1])
local out = {}
local add = 0
for i = 2, #ARGV do
  local n = tonumber(ARGV[i])
  if used + add + n <= limit then
    add = add + n
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if add > 0 then redis.call('INCRBY', KEYS[1], add) end
return out
`;

interface AllowanceRedis extends Redis {
  takeWebhookDeliveries(key: string, ...args: (string | number)[]): Promise<number | number[]>;
}

/**
 * The monthly webhook delivery allowance (§8, `LIMIT_WEBHOOKDELIVERIES`), counted in Redis: one
 * script call per workspace per dispatch batch instead of counting the month's delivery rows per
 * event. The counter is a cache of the database: when it is missing (first use in the month, or
 * expired) it is seeded from the rows (`countUsed`, on the (workspace_id, created_at) index). It
 * expires after an hour, so a count that drifted (a dispatcher killed between taking and inserting)
 * is corrected from the rows within the hour. Every process that makes deliveries (the worker's
 * dispatcher, the API's tests and redeliveries) takes from the same counter.
 */
export class DeliveryAllowance {
  static readonly TTL_SEC = 3600;

  constructor(
    private readonly prefix: string,
    private readonly countUsed: (workspaceId: string, since: Date) => Promise<number>,
  ) {}

  key(workspaceId: string, now: Date): string {
    const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    return `${this.prefix}:{ws:${workspaceId}}:webhook-deliveries:${month}`;
  }

  /**
   * For each event (its number of deliveries), whether it fits in what is left of `limit` this
   * month; those that fit are counted. An event that does not fit does not stop a later, smaller one.
   */
  async take(redis: Redis, workspaceId: string, sizes: number[], limit: number, now = new Date()): Promise<boolean[]> {
    if (!sizes.length) return [];
    const r = redis as AllowanceRedis;
    if (typeof r.takeWebhookDeliveries !== 'function') r.defineCommand('takeWebhookDeliveries', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    const key = this.key(workspaceId, now);
    for (let round = 0; ; round++) {
      const got = await r.takeWebhookDeliveries(key, limit, ...sizes);
      if (Array.isArray(got)) return got.map((x) => x === 1);
      if (round > 0) throw new Error(`The webhook delivery counter ${key} cannot be seeded`);
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const used = await this.countUsed(workspaceId, monthStart);
      await redis.set(key, used, 'EX', DeliveryAllowance.TTL_SEC, 'NX');
    }
  }
}
