/**
 * `gatehouse redis-acl`: the gateways' Redis ACL user (gateway/src/limits/redis-acl.ts has the
 * rule). The chart runs it; an operator of a managed Redis can print the rule.
 *
 *   redis-acl apply       ACL SETUSER, as the admin user of GATEHOUSE_REDIS_ADMIN_URL, for the
 *                         gateways' user: an existing Redis. One node: the admin URL's, the user
 *                         and password those of GATEHOUSE_REDIS_URL. Cluster
 *                         (GATEHOUSE_REDIS_CLUSTER_NODES) or Sentinel (GATEHOUSE_REDIS_SENTINELS,
 *                         GATEHOUSE_REDIS_SENTINEL_NAME): every master and replica (ACL users are
 *                         per node; see redis-nodes.ts), the user and password those of
 *                         GATEHOUSE_REDIS_USERNAME / GATEHOUSE_REDIS_PASSWORD, as the gateways
 *                         connect; the admin URL's host is not used there.
 *   redis-acl file PATH   writes a Redis ACL file: `default` with the admin URL's password and every
 *                         right, and the gateways' user (the bundled Redis starts with --aclfile)
 *   redis-acl rule        prints the rule
 *
 * Key prefixes: GATEHOUSE_LIMITS_KEY_PREFIX and GATEHOUSE_REDIS_KEY_PREFIX, as the gateway reads
 * them. URLs are read from the environment only (never arguments: a process list shows those), and
 * no password is ever printed.
 */
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import type { Redis } from 'ioredis'
import { gatewayRedisAclRule, gatewayRedisAclRules, redisKeyPrefixesFromEnv, redisOptionsFromEnv, type GatewayRedisKeyPrefixes } from '@gatehouse/gateway'
import { CliError } from './admin-client.ts'
import type { CommandIo } from './io.ts'
import { onEveryNode, type NodeOutcome, type RedisTopology } from './redis-nodes.ts'

export interface RedisCredentials {
  readonly username: string
  readonly password: string
}

/** The user and password a `redis://user:password@host` URL carries (percent-decoded). */
export function credentialsOf(url: string, variable: string): RedisCredentials {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new CliError(`${variable} is not a URL`, 2)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new CliError(`${variable} must be a redis:// or rediss:// URL`, 2)
  const username = decodeURIComponent(parsed.username)
  const password = decodeURIComponent(parsed.password)
  if (!password) throw new CliError(`${variable} has no password`, 2)
  return { username: username || 'default', password }
}

/** Where the gateways' Redis is, read as the gateways read it. */
function topologyOf(env: NodeJS.ProcessEnv, adminUrl: string): RedisTopology {
  let options: ReturnType<typeof redisOptionsFromEnv>
  try {
    options = redisOptionsFromEnv(env)
  } catch (error) {
    throw new CliError((error as Error).message, 2)
  }
  if (options?.clusterNodes) return { kind: 'cluster', seeds: options.clusterNodes }
  if (options?.sentinels) return { kind: 'sentinel', sentinels: options.sentinels, name: options.sentinelName! }
  return { kind: 'node', url: adminUrl }
}

/** The gateways' user and password: from their URL for one node, else from GATEHOUSE_REDIS_USERNAME / _PASSWORD. */
function gatewayUser(env: NodeJS.ProcessEnv, topology: RedisTopology['kind']): RedisCredentials {
  let user: RedisCredentials
  if (topology === 'node') {
    if (!env.GATEHOUSE_REDIS_URL) throw new CliError('GATEHOUSE_REDIS_URL (the gateways\' URL, with their user and password) is not set', 2)
    user = credentialsOf(env.GATEHOUSE_REDIS_URL, 'GATEHOUSE_REDIS_URL')
  } else {
    if (!env.GATEHOUSE_REDIS_PASSWORD) throw new CliError(`GATEHOUSE_REDIS_USERNAME and GATEHOUSE_REDIS_PASSWORD (the user the gateways connect to Redis ${topology === 'cluster' ? 'Cluster' : 'Sentinel'} with) are not set`, 2)
    user = { username: env.GATEHOUSE_REDIS_USERNAME || 'default', password: env.GATEHOUSE_REDIS_PASSWORD }
  }
  // The gateways' user must be a restricted one; `default` is what an unauthenticated client is.
  if (user.username === 'default') {
    throw new CliError(topology === 'node'
      ? 'GATEHOUSE_REDIS_URL names no user (or `default`): give the gateways a user of their own, e.g. redis://gatehouse-gateway:PASSWORD@host:6379/0'
      : 'GATEHOUSE_REDIS_USERNAME is not set (or `default`): give the gateways a user of their own', 2)
  }
  if (/[\s>#<]/.test(user.username)) throw new CliError('the Redis user name in GATEHOUSE_REDIS_URL may not contain white space or > < #', 2)
  return user
}

/** Creates or replaces the gateways' user on one Redis node (`reset` first: nothing it had before survives). */
export async function applyGatewayRedisUser(admin: Redis, user: RedisCredentials, prefixes: GatewayRedisKeyPrefixes): Promise<void> {
  await admin.call('ACL', 'SETUSER', user.username, 'reset', 'on', `>${user.password}`, ...gatewayRedisAclRules(prefixes))
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** A Redis ACL file: the admin as `default` and the gateways' user, passwords stored as SHA-256 (`#`). */
export function gatewayRedisAclFile(adminPassword: string, user: RedisCredentials, prefixes: GatewayRedisKeyPrefixes): string {
  return [
    `user default on #${sha256(adminPassword)} ~* &* +@all`,
    `user ${user.username} on #${sha256(user.password)} ${gatewayRedisAclRule(prefixes)}`,
    '',
  ].join('\n')
}

export async function runRedisAcl(argv: string[], io: CommandIo): Promise<number> {
  const [action, ...rest] = argv
  const prefixes = redisKeyPrefixesFromEnv(io.env)
  if (action === 'rule') {
    io.stdout(`${gatewayRedisAclRule(prefixes)}\n`)
    return 0
  }
  if (action !== 'apply' && action !== 'file') throw new CliError('usage: gatehouse redis-acl apply | file PATH | rule', 2)
  const adminUrl = io.env.GATEHOUSE_REDIS_ADMIN_URL
  if (!adminUrl) throw new CliError('GATEHOUSE_REDIS_ADMIN_URL (a Redis user allowed ACL SETUSER) is not set', 2)
  const topology = topologyOf(io.env, adminUrl)
  const user = gatewayUser(io.env, topology.kind)
  const admin = credentialsOf(adminUrl, 'GATEHOUSE_REDIS_ADMIN_URL')
  if (action === 'file') {
    const [path] = rest
    if (!path) throw new CliError('usage: gatehouse redis-acl file PATH', 2)
    await writeFile(path, gatewayRedisAclFile(admin.password, user, prefixes), { mode: 0o600 })
    io.stdout(`wrote ${path}: users default and ${user.username}\n`)
    return 0
  }
  let outcomes: NodeOutcome[]
  try {
    outcomes = await onEveryNode(topology, admin, (client) => applyGatewayRedisUser(client, user, prefixes))
  } catch (error) {
    throw new CliError(`could not find the Redis nodes to set the ACL user ${user.username} on: ${(error as Error).message}`)
  }
  const failed = outcomes.filter((outcome) => outcome.error !== null)
  const where = (list: readonly NodeOutcome[]) => list.map(({ node }) => `${node.host}:${node.port}${node.role === 'node' ? '' : ` (${node.role})`}`).join(', ')
  if (failed.length > 0) {
    const set = outcomes.filter((outcome) => outcome.error === null)
    throw new CliError(`could not set the Redis ACL user ${user.username} on ${failed.map((outcome) => `${where([outcome])}: ${outcome.error}`).join('; ')}` +
      `${set.length > 0 ? `; set on ${where(set)}` : ''}. ACL users are per node: run it again once every node answers`)
  }
  const count = (role: string) => outcomes.filter((outcome) => outcome.node.role === role).length
  const nodes = topology.kind === 'node' ? '' : ` on ${outcomes.length} nodes (${count('master')} master${count('master') === 1 ? '' : 's'}, ${count('replica')} replica${count('replica') === 1 ? '' : 's'})`
  io.stdout(`Redis ACL user ${user.username}: set${nodes} (keys ${[prefixes.limitsKeyPrefix, `${prefixes.cacheKeyPrefix}:`].join(', ')})\n`)
  return 0
}
