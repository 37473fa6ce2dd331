/**
 * The gateways' Redis ACL user, on real Redis:
 *
 * - `gatehouse redis-acl apply`'s SETUSER on the local Redis, then a gateway process connected as
 *   that user: a rate limit refuses past its value (it would fail open on NOPERM, so the 429 shows
 *   the counters work), a budget serves (it would fail closed, 503), the response cache hits, the
 *   semantic store log is tailed without a refusal logged, and the control plane's current-usage
 *   read works; outside the rule (another key, a script reaching another key, admin commands)
 *   Redis answers NOPERM. The user is deleted at the end.
 * - `redis-acl file`: a redis-server of the test's own started with the ACL file (what the
 *   chart's bundled Redis does) admits the admin and the gateways' user with their passwords,
 *   refuses a wrong one and unauthenticated clients, and holds the gateway user to the rule.
 *
 * Breaks tried: dropping `+hincrby` from the rule (the budget's settle script) makes the budget
 * request answer 503 and the test fail; dropping the cache key pattern makes the HIT a MISS.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayRedisAclRule } from '@gatehouse/gateway'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { redisLimitCounters } from '../../operator/src/admin/redis-counters.ts'
import { applyGatewayRedisUser, runRedisAcl } from '../../operator/src/cli/commands/redis-acl.ts'
import { buildSnapshot, TEST_PEPPER } from '../helpers/gateway.ts'
import { freePort, pollUntil, startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { dropPrefix, redisSkipReason, startRedisServer, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

const skip = await redisSkipReason()
const tag = randomBytes(4).toString('hex')
const USER = `gh-test-acl-${tag}`
const PASSWORD = randomBytes(18).toString('base64url')
const PREFIXES = { limitsKeyPrefix: `test-acl-${tag}:`, cacheKeyPrefix: `test-acl-cache-${tag}:cache` }
const CACHE_CONFIG = JSON.stringify({ provider: '@sim', cache: { mode: 'simple', max_age: 60 } })

function userUrl(port: number, user = USER, password = PASSWORD): string {
  return `redis://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/0`
}

const failureOf = async (run: () => Promise<unknown>): Promise<string> => {
  try {
    await run()
    return 'allowed'
  } catch (error) {
    return (error as Error).message
  }
}

describe.skipIf(skip !== null)('the gateways\' Redis ACL user on a real Redis', () => {
  let admin: Redis
  let simulator: Simulator
  let gateway: GatehouseProcess
  let url: string
  let directory: string
  const workspaceKey = generateApiKey('workspace')

  beforeAll(async () => {
    admin = new Redis(TEST_REDIS_URL)
    await applyGatewayRedisUser(admin, { username: USER, password: PASSWORD }, PREFIXES)
    simulator = await startOpenAISimulator({ recordLimit: 0 })
    const snapshot = buildSnapshot([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], { workspaceKey, adminKey: generateApiKey('admin') })
    snapshot.limits = [
      { id: 'rpm4', source: 'policy', ownerId: 'rpm4', name: 'acl rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 4, conditions: [{ key: 'api_key', values: ['key-ws'] }] },
      { id: 'budget', source: 'policy', ownerId: 'budget', name: 'acl budget', kind: 'usage', type: 'tokens', creditLimit: 1_000_000, conditions: [{ key: 'api_key', values: ['key-ws'] }] },
    ]
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-acl-'))
    const file = join(directory, 'snapshot.json')
    await writeFile(file, JSON.stringify(snapshot))
    const port = Number(new URL(TEST_REDIS_URL).port || 6379)
    gateway = startGatehouse(['gateway'], {
      GATEHOUSE_KEY_PEPPER: TEST_PEPPER, GATEHOUSE_SNAPSHOT_FILE: file, GATEHOUSE_PORT: '0',
      GATEHOUSE_REDIS_URL: userUrl(port), GATEHOUSE_LIMITS_KEY_PREFIX: PREFIXES.limitsKeyPrefix,
      GATEHOUSE_REDIS_KEY_PREFIX: PREFIXES.cacheKeyPrefix.slice(0, -':cache'.length),
    })
    url = (await gateway.waitForLog((line) => line.msg === 'gateway is serving', 60_000)).url as string
  }, 90_000)

  afterAll(async () => {
    await gateway?.stop()
    await simulator?.close()
    if (directory) await rm(directory, { recursive: true, force: true })
    if (admin) {
      await admin.call('ACL', 'DELUSER', USER)
      await dropPrefix(admin, PREFIXES.limitsKeyPrefix)
      await dropPrefix(admin, `${PREFIXES.cacheKeyPrefix}:`)
      admin.disconnect()
    }
  })

  const ask = async (content: string) => {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${workspaceKey}`, 'x-gateway-config': CACHE_CONFIG, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content }] }),
    })
    await response.arrayBuffer()
    return { status: response.status, cache: response.headers.get('x-gateway-cache-status'), remaining: response.headers.get('x-ratelimit-remaining-requests') }
  }

  it('serves limits, budgets and the cache under the rule, and Redis refuses everything else', async () => {
    const first = await ask(`hello ${tag}`)
    expect(first).toMatchObject({ status: 200, cache: 'MISS', remaining: '3' })
    const again = await ask(`hello ${tag}`)
    expect(again.status).toBe(200)
    expect(again.cache).toBe('HIT')
    const rest = [await ask(`one ${tag}`), await ask(`two ${tag}`), await ask(`three ${tag}`), await ask(`four ${tag}`)]
    // Four requests a minute: whether a cache hit counts or not, the limit refuses by the sixth.
    expect(rest.map((r) => r.status)).toContain(429)
    expect(rest.filter((r) => r.status !== 200 && r.status !== 429)).toEqual([])

    // Settled budget spend is in Redis, and the control plane reads it with the same user.
    const port = Number(new URL(TEST_REDIS_URL).port || 6379)
    const counters = redisLimitCounters(userUrl(port), PREFIXES.limitsKeyPrefix)
    try {
      const [budgetKey] = await admin.keys(`${PREFIXES.limitsKeyPrefix}*:b:budget:*:b`)
      expect(budgetKey).toBeDefined()
      // Its client has no offline queue: read once it is connected.
      let usage = 0
      await pollUntil(async () => {
        usage = (await counters.usage([budgetKey!.slice(0, -':b'.length)]).catch(() => [0]))[0]!
        return usage > 0
      }, 5_000, 50)
      expect(usage).toBeGreaterThan(0)
    } finally {
      counters.close()
    }
    // (The semantic log's tail logs timeouts of its blocking read, ACL or not: not a refusal.)
    const refusals = gateway.lines.filter((line) => /NOPERM|limit counters unavailable/i.test(JSON.stringify(line)))
    expect(refusals).toEqual([])

    const asGateway = new Redis(userUrl(port), { maxRetriesPerRequest: 0 })
    try {
      expect(await asGateway.get(`${PREFIXES.limitsKeyPrefix}anything`)).toBeNull()
      // The semantic store log: what the gateway's feed sends.
      const log = `${PREFIXES.cacheKeyPrefix}:semantic-log`
      const id = await asGateway.xadd(log, 'MAXLEN', '~', 100, '*', 'w', 'ws', 'k', 'key')
      expect((await asGateway.xrevrange(log, '+', '-', 'COUNT', 1))[0]![0]).toBe(id)
      expect(await asGateway.xread('COUNT', 1, 'STREAMS', log, '0-0')).toHaveLength(1)
      expect(await failureOf(() => asGateway.get(`other-${tag}:x`))).toMatch(/NOPERM/)
      expect(await failureOf(() => asGateway.set(`${PREFIXES.cacheKeyPrefix}-not-the-cache`, '1'))).toMatch(/NOPERM/)
      expect(await failureOf(() => asGateway.eval("return redis.call('GET', ARGV[1])", 0, `other-${tag}:x`))).toMatch(/NOPERM|can't access/)
      expect(await failureOf(() => asGateway.keys('*'))).toMatch(/NOPERM/)
      expect(await failureOf(() => asGateway.flushall())).toMatch(/NOPERM/)
      expect(await failureOf(() => asGateway.call('CONFIG', 'GET', '*'))).toMatch(/NOPERM/)
      expect(await failureOf(() => asGateway.call('ACL', 'SETUSER', USER, '+@all'))).toMatch(/NOPERM/)
      expect(await failureOf(() => asGateway.publish('channel', 'x'))).toMatch(/NOPERM/)
    } finally {
      asGateway.disconnect()
    }
  })

  it('writes an ACL file that a redis-server starts with: admin, the gateways\' user, nobody else', async () => {
    const port = await freePort()
    const adminPassword = randomBytes(18).toString('base64url')
    const path = join(directory, 'users.acl')
    const out: string[] = []
    const io = { stdout: (text: string) => out.push(text), stderr: () => undefined, env: {
      GATEHOUSE_REDIS_URL: userUrl(port), GATEHOUSE_REDIS_ADMIN_URL: `redis://:${adminPassword}@127.0.0.1:${port}/0`,
      GATEHOUSE_LIMITS_KEY_PREFIX: PREFIXES.limitsKeyPrefix, GATEHOUSE_REDIS_KEY_PREFIX: PREFIXES.cacheKeyPrefix.slice(0, -':cache'.length),
    } }
    expect(await runRedisAcl(['file', path], io)).toBe(0)
    const text = await readFile(path, 'utf8')
    expect(text).toContain(gatewayRedisAclRule(PREFIXES))
    // Passwords are stored hashed, never in the clear; nothing printed names them.
    expect(text).not.toContain(PASSWORD)
    expect(text).not.toContain(adminPassword)
    expect(out.join('')).not.toContain(PASSWORD)

    const server: ChildProcess = await startRedisServer(port, ['--aclfile', path])
    const clients: Redis[] = []
    const connect = (target: string) => {
      const client = new Redis(target, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true })
      client.on('error', () => undefined)
      clients.push(client)
      return client
    }
    try {
      const asAdmin = connect(`redis://:${adminPassword}@127.0.0.1:${port}/0`)
      await asAdmin.connect()
      expect(await asAdmin.set(`other-${tag}`, '1')).toBe('OK')
      const asGateway = connect(userUrl(port))
      await asGateway.connect()
      expect(await asGateway.call('EVAL', "return redis.call('HINCRBY', KEYS[1], 'spent', 5)", 1, `${PREFIXES.limitsKeyPrefix}{org}:b`)).toBe(5)
      expect(await failureOf(() => asGateway.get(`other-${tag}`))).toMatch(/NOPERM/)
      // A failed AUTH leaves the connection as it was.
      expect(await failureOf(() => asAdmin.call('AUTH', USER, 'wrong-password'))).toMatch(/WRONGPASS/)
      const anonymous = new Redis(`redis://127.0.0.1:${port}/0`, { maxRetriesPerRequest: 0, retryStrategy: () => null, enableReadyCheck: false, lazyConnect: true })
      clients.push(anonymous)
      await anonymous.connect()
      expect(await failureOf(() => anonymous.get('x'))).toMatch(/NOAUTH/)
    } finally {
      for (const client of clients) client.disconnect()
      server.kill('SIGKILL')
    }
  })

  it('apply refuses a gateway URL without a user of its own; rule prints the rule', async () => {
    const io = (env: NodeJS.ProcessEnv, out: string[] = []) => ({ stdout: (text: string) => out.push(text), stderr: () => undefined, env })
    await expect(runRedisAcl(['apply'], io({ GATEHOUSE_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:6379/0`, GATEHOUSE_REDIS_ADMIN_URL: TEST_REDIS_URL }))).rejects.toThrow(/user of their own/)
    const out: string[] = []
    expect(await runRedisAcl(['rule'], io({ GATEHOUSE_LIMITS_KEY_PREFIX: 'a*b:' }, out))).toBe(0)
    // A glob character in a prefix is matched literally.
    expect(out.join('')).toContain('~a\\*b:*')
    expect(out.join('')).toContain('~gh:cache:*')
  })
})
