/**
 * Redis Cluster and Sentinel deployments of a test's own, on loopback ports, from the local
 * `redis-server` (no persistence, files in a temp directory the caller removes). Every node
 * requires `password` for the default user (the admin) and replicas authenticate to their master
 * with it. `redisServerSkipReason` skips a suite without `redis-server`, and fails it under CI=true.
 */
import { spawnSync, type ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort, pollUntil } from './processes.ts'
import { startRedisServer } from './redis.ts'

export function redisServerSkipReason(): string | null {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0) return null
  if (process.env.CI === 'true') throw new Error('redis-server is not installed and CI=true requires it')
  const reason = 'redis-server is not installed; skipping the Redis Cluster and Sentinel suite'
  console.warn(`[redis tests] ${reason}`)
  return reason
}

export interface LoopbackNode {
  readonly port: number
  readonly process: ChildProcess
}

export interface LoopbackDeployment {
  readonly masters: LoopbackNode[]
  readonly replicas: LoopbackNode[]
  /** Sentinel deployments only. */
  readonly sentinel: LoopbackNode | null
  /** An admin connection to a node (the default user with the password); the deployment closes them. */
  admin(port: number): Redis
  stop(): void
}

function deployment(password: string, masters: LoopbackNode[], replicas: LoopbackNode[], sentinel: LoopbackNode | null): LoopbackDeployment {
  const clients = new Map<number, Redis>()
  return {
    masters,
    replicas,
    sentinel,
    admin(port) {
      let client = clients.get(port)
      if (client === undefined) {
        client = new Redis({ host: '127.0.0.1', port, password, maxRetriesPerRequest: 1, retryStrategy: () => null })
        client.on('error', () => undefined)
        clients.set(port, client)
      }
      return client
    },
    stop() {
      for (const client of clients.values()) client.disconnect()
      for (const node of [...masters, ...replicas, ...(sentinel ? [sentinel] : [])]) node.process.kill('SIGKILL')
    },
  }
}

/** Lines of CLUSTER NODES as [id, flags] of the node asked (`myself`). */
async function myself(client: Redis): Promise<{ id: string; flags: string[] }> {
  const line = ((await client.call('CLUSTER', 'NODES')) as string).split('\n').find((entry) => entry.includes('myself'))!
  const [id, , flags] = line.split(' ')
  return { id: id!, flags: flags!.split(',') }
}

/**
 * A Redis Cluster of `masters` masters (the slots split evenly) with `replicasPerMaster` replicas
 * each, answering once every node sees the cluster ok and every replica follows its master.
 */
export async function startRedisCluster(directory: string, password: string, masters = 3, replicasPerMaster = 1): Promise<LoopbackDeployment> {
  const started: LoopbackNode[] = []
  const busPorts = new Map<number, number>()
  const start = async (): Promise<LoopbackNode> => {
    const [port, busPort] = [await freePort(), await freePort()]
    const process = await startRedisServer(port, [
      '--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', join(directory, `nodes-${port}.conf`),
      '--cluster-node-timeout', '2000', '--dir', directory, '--requirepass', password, '--masterauth', password,
    ])
    const node = { port, process }
    started.push(node)
    busPorts.set(port, busPort)
    return node
  }
  const nodes = deployment(password, [], [], null)
  try {
    for (let i = 0; i < masters; i++) nodes.masters.push(await start())
    for (let i = 0; i < masters * replicasPerMaster; i++) nodes.replicas.push(await start())
    const slotsPerMaster = Math.ceil(16_384 / masters)
    for (const [index, master] of nodes.masters.entries()) {
      await nodes.admin(master.port).call('CLUSTER', 'ADDSLOTSRANGE', String(index * slotsPerMaster), String(Math.min(16_383, (index + 1) * slotsPerMaster - 1)))
    }
    const first = nodes.admin(nodes.masters[0]!.port)
    for (const node of started.slice(1)) await first.call('CLUSTER', 'MEET', '127.0.0.1', String(node.port), String(busPorts.get(node.port)))
    const masterIds = await Promise.all(nodes.masters.map(async (master) => (await myself(nodes.admin(master.port))).id))
    for (const [index, replica] of nodes.replicas.entries()) {
      const client = nodes.admin(replica.port)
      const masterId = masterIds[index % masters]!
      // A replica can follow a master only once the gossip has told it about that master.
      await pollUntil(async () => ((await client.call('CLUSTER', 'NODES')) as string).includes(masterId), 15_000, 50)
      await client.call('CLUSTER', 'REPLICATE', masterId)
    }
    await pollUntil(async () => {
      for (const node of started) {
        const info = (await nodes.admin(node.port).call('CLUSTER', 'INFO')) as string
        if (!info.includes('cluster_state:ok') || !info.includes(`cluster_known_nodes:${started.length}`)) return false
      }
      for (const replica of nodes.replicas) {
        if (!((await nodes.admin(replica.port).info('replication')).includes('master_link_status:up'))) return false
      }
      return true
    }, 30_000, 100)
    return nodes
  } catch (error) {
    nodes.stop()
    throw error
  }
}

/** Waits for a replica's manual failover (CLUSTER FAILOVER) to make it a master. */
export async function failOverTo(nodes: LoopbackDeployment, replicaPort: number): Promise<void> {
  const client = nodes.admin(replicaPort)
  await client.call('CLUSTER', 'FAILOVER')
  await pollUntil(async () => (await myself(client)).flags.includes('master'), 15_000, 50)
}

/** A master, `replicas` replicas and one sentinel monitoring the master as `name` (quorum 1). */
export async function startRedisSentinel(directory: string, password: string, name: string, replicas = 1): Promise<LoopbackDeployment> {
  const auth = ['--requirepass', password, '--masterauth', password]
  const master = { port: await freePort(), process: null as unknown as ChildProcess }
  const nodes = deployment(password, [], [], null)
  let sentinel: LoopbackNode | null = null
  try {
    master.process = await startRedisServer(master.port, auth)
    nodes.masters.push(master)
    for (let i = 0; i < replicas; i++) {
      const port = await freePort()
      nodes.replicas.push({ port, process: await startRedisServer(port, [...auth, '--replicaof', '127.0.0.1', String(master.port)]) })
    }
    const sentinelPort = await freePort()
    const config = join(directory, `sentinel-${sentinelPort}.conf`)
    await writeFile(config, `sentinel monitor ${name} 127.0.0.1 ${master.port} 1\nsentinel auth-pass ${name} ${password}\n`)
    sentinel = { port: sentinelPort, process: await startRedisServer(sentinelPort, [], { sentinelConfig: config }) }
    // The sentinel learns the replicas from the master's INFO.
    const probe = new Redis({ host: '127.0.0.1', port: sentinelPort, maxRetriesPerRequest: 1 })
    try {
      await pollUntil(async () => ((await probe.call('SENTINEL', 'REPLICAS', name)) as unknown[]).length === replicas, 20_000, 100)
    } finally {
      probe.disconnect()
    }
    return deployment(password, nodes.masters, nodes.replicas, sentinel)
  } catch (error) {
    nodes.stop()
    sentinel?.process.kill('SIGKILL')
    throw error
  }
}
