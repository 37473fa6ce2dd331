/**
 * `gatehouse redis-acl`: the gateways' Redis ACL user (gateway/src/limits/redis-acl.ts has the
 * rule). The chart runs it; an operator of a managed Redis can print the rule.
 *
 *   redis-acl apply       ACL SETUSER on GATEHOUSE_REDIS_ADMIN_URL (an admin user) for the user and
 *                         password in GATEHOUSE_REDIS_URL (the gateways' URL): an existing Redis
 *   redis-acl file PATH   writes a Redis ACL file: `default` with the admin URL's password and every
 *                         right, and the gateways' user (the bundled Redis starts with --aclfile)
 *   redis-acl rule        prints the rule
 *
 * Key prefixes: GATEHOUSE_LIMITS_KEY_PREFIX and GATEHOUSE_REDIS_KEY_PREFIX, as the gateway reads
 * them. URLs are read from the environment only (never arguments: a process list shows those), and
 * no password is ever printed. One node per run: on Redis Cluster, apply it to every node.
 */
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { gatewayRedisAclRule, gatewayRedisAclRules, redisKeyPrefixesFromEnv, type GatewayRedisKeyPrefixes } from '@gatehouse/gateway'
import { CliError } from './admin-client.ts'
import type { CommandIo } from './io.ts'

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

function gatewayUser(env: NodeJS.ProcessEnv): RedisCredentials {
  if (!env.GATEHOUSE_REDIS_URL) throw new CliError('GATEHOUSE_REDIS_URL (the gateways\' URL, with their user and password) is not set', 2)
  const user = credentialsOf(env.GATEHOUSE_REDIS_URL, 'GATEHOUSE_REDIS_URL')
  // The gateways' user must be a restricted one; `default` is what an unauthenticated client is.
  if (user.username === 'default') throw new CliError('GATEHOUSE_REDIS_URL names no user (or `default`): give the gateways a user of their own, e.g. redis://gatehouse-gateway:PASSWORD@host:6379/0', 2)
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
  const user = gatewayUser(io.env)
  if (!io.env.GATEHOUSE_REDIS_ADMIN_URL) throw new CliError('GATEHOUSE_REDIS_ADMIN_URL (a Redis user allowed ACL SETUSER) is not set', 2)
  if (action === 'file') {
    const [path] = rest
    if (!path) throw new CliError('usage: gatehouse redis-acl file PATH', 2)
    const admin = credentialsOf(io.env.GATEHOUSE_REDIS_ADMIN_URL, 'GATEHOUSE_REDIS_ADMIN_URL')
    await writeFile(path, gatewayRedisAclFile(admin.password, user, prefixes), { mode: 0o600 })
    io.stdout(`wrote ${path}: users default and ${user.username}\n`)
    return 0
  }
  const admin = new Redis(io.env.GATEHOUSE_REDIS_ADMIN_URL, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 5_000 })
  try {
    await admin.connect()
    await applyGatewayRedisUser(admin, user, prefixes)
  } catch (error) {
    // ioredis messages name the host, never the password.
    throw new CliError(`could not set the Redis ACL user ${user.username}: ${(error as Error).message}`)
  } finally {
    admin.disconnect()
  }
  io.stdout(`Redis ACL user ${user.username}: set (keys ${[prefixes.limitsKeyPrefix, `${prefixes.cacheKeyPrefix}:`].join(', ')})\n`)
  return 0
}
