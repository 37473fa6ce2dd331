/**
 * The Redis ACL rule of the gateways' user: only the keys under the gateway's prefixes (the limit
 * counters and the response cache) and only the commands the gateway (and the control plane's
 * read of `current_usage`) sends, so a gateway's Redis password opens nothing else. The chart
 * applies it (`gatehouse redis-acl`); tests apply it to a real Redis and run a gateway under it.
 *
 * Commands are listed one by one rather than by category: Redis checks the commands a Lua script
 * calls against the caller's ACL too, so the list is what the scripts in redis-scripts.ts and
 * cache/redis.ts call, plus the direct calls. A new command in a script must be added here (the
 * ACL test runs a gateway under this rule and fails with NOPERM otherwise).
 */

/** Where the gateway's keys live: limit counters, and the response cache (a prefix, then `:`). */
export interface GatewayRedisKeyPrefixes {
  /** GATEHOUSE_LIMITS_KEY_PREFIX, default `gh:`: every counter key starts with it. */
  readonly limitsKeyPrefix: string
  /** `<GATEHOUSE_REDIS_KEY_PREFIX>:cache`, default `gh:cache`: cache keys start with it and `:`. */
  readonly cacheKeyPrefix: string
}

export function redisKeyPrefixesFromEnv(env: NodeJS.ProcessEnv): GatewayRedisKeyPrefixes {
  return { limitsKeyPrefix: env.GATEHOUSE_LIMITS_KEY_PREFIX ?? 'gh:', cacheKeyPrefix: `${env.GATEHOUSE_REDIS_KEY_PREFIX ?? 'gh'}:cache` }
}

/**
 * Commands the Lua scripts call (limits: apply, usage; cache: set with eviction). ZSCORE and
 * ZREMRANGEBYSCORE are the previous version's limits script's: a rule applied before a rolling
 * update must still serve the gateways not yet updated.
 */
const SCRIPT_COMMANDS = [
  'time', 'get', 'set', 'del', 'incrby', 'decrby', 'pexpire', 'pttl',
  'hget', 'hmget', 'hset', 'hdel', 'hincrby',
  'zadd', 'zrem', 'zscore', 'zrange', 'zrangebyscore', 'zremrangebyscore',
] as const

/** Commands sent directly: scripts (EVALSHA, EVAL when the script is not cached yet), cache reads, the semantic log. */
const DIRECT_COMMANDS = ['evalsha', 'eval', 'mget', 'xadd', 'xread', 'xrevrange'] as const

/**
 * What ioredis sends on connecting: INFO (its ready check, which waits out a Redis still loading),
 * SELECT (a database in the URL), and for Redis Cluster the slot map, CLUSTER INFO (the Cluster
 * client's ready check: without it the client never becomes ready) and ASKING on a slot in
 * migration; PING for probes. Its CLIENT SETINFO is left out (refusals are ignored by ioredis, and
 * Redis before 7.2 has no such subcommand, so naming it would make the rule fail there).
 */
const CONNECTION_COMMANDS = ['info', 'ping', 'select', 'cluster|slots', 'cluster|info', 'asking'] as const

/** A literal prefix as an ACL key glob: `*`, `?`, `[`, `]` and `\` escaped, then `*`. */
function keyPattern(prefix: string): string {
  if (prefix.length === 0) throw new Error('a Redis key prefix must not be empty: the ACL user would be allowed every key')
  if (/\s/.test(prefix)) throw new Error(`Redis key prefix '${prefix}' contains white space, which an ACL rule cannot hold`)
  return `~${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`
}

/**
 * The ACL rule (without user name, state or password) as its tokens, in `ACL SETUSER` order:
 * no keys or channels but the gateway's, no command but those listed.
 */
export function gatewayRedisAclRules(prefixes: GatewayRedisKeyPrefixes): string[] {
  const patterns = new Set([keyPattern(prefixes.limitsKeyPrefix), keyPattern(`${prefixes.cacheKeyPrefix}:`)])
  return [
    'resetkeys', ...patterns, 'resetchannels', '-@all',
    ...[...SCRIPT_COMMANDS, ...DIRECT_COMMANDS, ...CONNECTION_COMMANDS].map((command) => `+${command}`),
  ]
}

/** The same rule as one string, for an ACL file line or a log. */
export function gatewayRedisAclRule(prefixes: GatewayRedisKeyPrefixes): string {
  return gatewayRedisAclRules(prefixes).join(' ')
}
