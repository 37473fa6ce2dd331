/**
 * `gatehouse redis-acl apply` on a Redis Cluster and on a Sentinel deployment, each started by the
 * test on loopback ports (test/helpers/redis-topologies.ts): ACL users live per node, so the user
 * must reach every master and replica.
 *
 * - Cluster (3 masters, 3 replicas), given one seed: the user is on all six nodes and holds there
 *   to the rule; a gateway limiter connected to the Cluster as that user counts on every master;
 *   after a replica takes over its master (CLUSTER FAILOVER), a fresh limiter counts on, with the
 *   count the replica carried over. A node that is down makes the command fail, naming it and the
 *   nodes it did reach.
 * - Sentinel (a master, a replica, a sentinel): the user is on the master and the replica, and a
 *   limiter connected through the sentinel as that user counts.
 *
 * Breaks tried: applying on the seed only (the former behaviour) leaves five nodes without the
 * user; without `cluster|info` in the rule (ioredis's Cluster ready check) the limiter never
 * connects and every reservation fails. With the Cluster client's offline queue off (the former
 * connectRedis) it connected in two runs of three: its ready check raced the node connections.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisLimiter, connectRedis, type RedisLimiterOptions } from '../../gateway/src/limits/redis-limiter.ts'
import type { Counter } from '../../gateway/src/limits/limiter.ts'
import { runRedisAcl } from '../../operator/src/cli/commands/redis-acl.ts'
import { failOverTo, redisServerSkipReason, startRedisCluster, startRedisSentinel, type LoopbackDeployment } from '../helpers/redis-topologies.ts'

const skip = redisServerSkipReason()
const ADMIN_PASSWORD = randomBytes(12).toString('base64url')
const USER = 'gatehouse-gateway'
const PASSWORD = randomBytes(18).toString('base64url')
const PREFIX = 'gh:'

function io(env: NodeJS.ProcessEnv) {
  const out: string[] = []
  return { out, io: { stdout: (text: string) => out.push(text), stderr: () => undefined, env: { ...env, GATEHOUSE_LIMITS_KEY_PREFIX: PREFIX } } }
}

/** What the gateways' user may and may not do on one node, connected straight to it. */
async function asGateway(port: number): Promise<{ own: unknown; other: string }> {
  const client = new Redis({ host: '127.0.0.1', port, username: USER, password: PASSWORD, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true })
  client.on('error', () => undefined)
  try {
    await client.connect()
    // A replica answers reads; a key of another slot's master answers MOVED, which is no refusal.
    const own = await client.get(`${PREFIX}probe`).catch((error: Error) => (/MOVED/.test(error.message) ? 'moved' : error.message))
    const other = await client.get('not-gatehouse').then(() => 'allowed', (error: Error) => error.message)
    return { own, other }
  } finally {
    client.disconnect()
  }
}

async function limiterAsGateway(options: RedisLimiterOptions): Promise<RedisLimiter> {
  const client = connectRedis({ ...options, username: USER, password: PASSWORD })
  return new RedisLimiter(client, 10_000)
}

const rate = (tag: string): Counter => ({ kind: 'rate', key: `${PREFIX}{${tag}}:r:acl-topology::-`, windowMs: 600_000, limit: 100, amount: 1, enforce: true })

describe.skipIf(skip !== null)('the gateways\' Redis ACL user on a Redis Cluster (3 masters, 3 replicas on loopback)', () => {
  let directory: string
  let cluster: LoopbackDeployment
  const env = () => ({
    GATEHOUSE_REDIS_CLUSTER_NODES: `127.0.0.1:${cluster.masters[0]!.port}`,
    GATEHOUSE_REDIS_USERNAME: USER,
    GATEHOUSE_REDIS_PASSWORD: PASSWORD,
    GATEHOUSE_REDIS_ADMIN_URL: `redis://:${ADMIN_PASSWORD}@127.0.0.1:${cluster.masters[0]!.port}`,
  })

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-cluster-'))
    cluster = await startRedisCluster(directory, ADMIN_PASSWORD, 3, 1)
  }, 60_000)

  afterAll(async () => {
    cluster?.stop()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  /** A hash tag whose slot master `index` serves (the slots are split evenly, in order). */
  async function tagOnMaster(index: number): Promise<string> {
    const admin = cluster.admin(cluster.masters[0]!.port)
    const perMaster = Math.ceil(16_384 / cluster.masters.length)
    for (let i = 0; ; i++) {
      const slot = (await admin.call('CLUSTER', 'KEYSLOT', `{org-${i}}`)) as number
      if (Math.floor(slot / perMaster) === index) return `org-${i}`
    }
  }

  it('sets the user on every master and replica from one seed, and gateways count on every shard, before and after a failover', async () => {
    const run = io(env())
    expect(await runRedisAcl(['apply'], run.io)).toBe(0)
    expect(run.out.join('')).toContain(`Redis ACL user ${USER}: set on 6 nodes (3 masters, 3 replicas)`)
    expect(run.out.join('')).not.toContain(PASSWORD)

    for (const node of [...cluster.masters, ...cluster.replicas]) {
      expect(await cluster.admin(node.port).call('ACL', 'GETUSER', USER)).not.toBeNull()
      const access = await asGateway(node.port)
      expect(access.other).toMatch(/NOPERM/)
      expect([null, 'moved']).toContain(access.own)
    }

    const tags = await Promise.all(cluster.masters.map((_, index) => tagOnMaster(index)))
    const seeds = [{ host: '127.0.0.1', port: cluster.masters[0]!.port }]
    const before = await limiterAsGateway({ clusterNodes: seeds })
    try {
      const results = await Promise.all(tags.map((tag) => before.reserve(`r-${tag}`, [rate(tag)], 600_000)))
      expect(results.map((r) => [r.admitted, r.states[0]!.used])).toEqual(tags.map(() => [true, 1]))
    } finally {
      await before.close()
    }

    // The replica of the first master takes over; it had the user (and the counter) already.
    await failOverTo(cluster, cluster.replicas[0]!.port)
    const after = await limiterAsGateway({ clusterNodes: seeds })
    try {
      // A manual failover waits for the replica to catch up: the count carries over.
      const result = await after.reserve(`r-${tags[0]}-after`, [rate(tags[0]!)], 600_000)
      expect(result).toMatchObject({ admitted: true, states: [{ used: 2 }] })
    } finally {
      await after.close()
    }
  }, 60_000)

  it('fails naming a node that is down, and says which nodes have the user', async () => {
    const down = cluster.replicas[2]!
    down.process.kill('SIGKILL')
    const run = io(env())
    const failure = await runRedisAcl(['apply'], run.io).then(() => null, (error: Error & { exitCode?: number }) => error)
    expect(failure?.exitCode).toBe(1)
    expect(failure?.message).toContain(`127.0.0.1:${down.port}`)
    expect(failure?.message).toMatch(/set on .*127\.0\.0\.1:\d+ \(master\)/)
    expect(failure?.message).toMatch(/run it again/)
    expect(failure?.message).not.toContain(PASSWORD)
    expect(failure?.message).not.toContain(ADMIN_PASSWORD)
  }, 30_000)
})

describe.skipIf(skip !== null)('the gateways\' Redis ACL user on Redis Sentinel (a master, a replica, a sentinel on loopback)', () => {
  let directory: string
  let sentinel: LoopbackDeployment

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-sentinel-'))
    sentinel = await startRedisSentinel(directory, ADMIN_PASSWORD, 'gatehouse', 1)
  }, 60_000)

  afterAll(async () => {
    sentinel?.stop()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  it('sets the user on the master and its replica, and gateways connected through the sentinel count', async () => {
    const run = io({
      GATEHOUSE_REDIS_SENTINELS: `127.0.0.1:${sentinel.sentinel!.port}`,
      GATEHOUSE_REDIS_SENTINEL_NAME: 'gatehouse',
      GATEHOUSE_REDIS_USERNAME: USER,
      GATEHOUSE_REDIS_PASSWORD: PASSWORD,
      // Only the admin URL's user and password are used: the nodes are the sentinel's.
      GATEHOUSE_REDIS_ADMIN_URL: `redis://:${ADMIN_PASSWORD}@127.0.0.1:1`,
    })
    expect(await runRedisAcl(['apply'], run.io)).toBe(0)
    expect(run.out.join('')).toContain(`Redis ACL user ${USER}: set on 2 nodes (1 master, 1 replica)`)
    for (const node of [...sentinel.masters, ...sentinel.replicas]) {
      expect(await sentinel.admin(node.port).call('ACL', 'GETUSER', USER)).not.toBeNull()
      expect((await asGateway(node.port)).other).toMatch(/NOPERM/)
    }
    const limiter = await limiterAsGateway({ sentinels: [{ host: '127.0.0.1', port: sentinel.sentinel!.port }], sentinelName: 'gatehouse' })
    try {
      expect(await limiter.reserve('r-sentinel', [rate('org')], 600_000)).toMatchObject({ admitted: true, states: [{ used: 1 }] })
    } finally {
      await limiter.close()
    }
  }, 60_000)

  it('asks for the gateways\' own user', async () => {
    const run = io({ GATEHOUSE_REDIS_SENTINELS: `127.0.0.1:${sentinel.sentinel!.port}`, GATEHOUSE_REDIS_SENTINEL_NAME: 'gatehouse', GATEHOUSE_REDIS_ADMIN_URL: `redis://:${ADMIN_PASSWORD}@127.0.0.1:1` })
    await expect(runRedisAcl(['apply'], run.io)).rejects.toThrow(/GATEHOUSE_REDIS_USERNAME and GATEHOUSE_REDIS_PASSWORD/)
  })
})
