/**
 * The Redis nodes an ACL user must be set on. Redis keeps ACL users per node and replicates
 * neither them nor ACL SETUSER: a Cluster needs the user on every master and every replica (a
 * replica promoted by a failover serves the gateways next), a Sentinel deployment on its current
 * master and its replicas. Found the way the gateways find their Redis (the same variables):
 *
 *   Cluster   CLUSTER NODES from the first seed that answers: every node it knows, masters
 *             without slots too (the slot map ioredis keeps lists only masters with slots).
 *   Sentinel  the first sentinel that answers: the master's address and its replicas.
 *   One node  the admin URL itself.
 */
import { Redis, type RedisOptions } from 'ioredis'

export interface NodeAddress {
  readonly host: string
  readonly port: number
}

export type RedisTopology =
  | { readonly kind: 'node'; readonly url: string }
  | { readonly kind: 'cluster'; readonly seeds: readonly NodeAddress[] }
  | { readonly kind: 'sentinel'; readonly sentinels: readonly NodeAddress[]; readonly name: string }

export interface RedisNode extends NodeAddress {
  readonly role: 'master' | 'replica' | 'node'
  /** Why the node cannot be reached (a failed cluster node, a sentinel's down replica), as its peers report it. */
  readonly down: string | null
}

export interface AdminCredentials {
  readonly username: string
  readonly password: string
}

const CONNECT_TIMEOUT_MS = 5_000

/** A connection (call `connect`) that tries once and fails fast: a node that is down is reported, not waited for. */
export function connectOnce(target: string | RedisOptions): Redis {
  const options: RedisOptions = { connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true }
  const client = typeof target === 'string' ? new Redis(target, options) : new Redis({ ...options, ...target })
  // Errors surface on the calls.
  client.on('error', () => undefined)
  return client
}

async function firstAnswer<T>(addresses: readonly NodeAddress[], what: string, ask: (client: Redis) => Promise<T>, options: RedisOptions): Promise<T> {
  const failures: string[] = []
  for (const address of addresses) {
    const client = connectOnce({ ...options, host: address.host, port: address.port })
    try {
      await client.connect()
      return await ask(client)
    } catch (error) {
      failures.push(`${address.host}:${address.port}: ${(error as Error).message}`)
    } finally {
      client.disconnect()
    }
  }
  throw new Error(`no ${what} answered (${failures.join('; ')})`)
}

/** `host:port@cport[,hostname]` of a CLUSTER NODES line (the host may be an IPv6 address). */
function clusterAddress(field: string): NodeAddress | null {
  const hostPort = field.split('@')[0]!
  const colon = hostPort.lastIndexOf(':')
  const port = Number(hostPort.slice(colon + 1))
  if (colon <= 0 || !Number.isInteger(port) || port <= 0) return null
  return { host: hostPort.slice(0, colon), port }
}

/** The nodes of a CLUSTER NODES reply, but those still in a handshake or without an address. */
export function parseClusterNodes(reply: string): RedisNode[] {
  const nodes: RedisNode[] = []
  for (const line of reply.split('\n')) {
    const [, addressField, flagsField] = line.trim().split(' ')
    if (addressField === undefined || flagsField === undefined) continue
    const flags = flagsField.split(',')
    const address = clusterAddress(addressField)
    if (address === null || flags.includes('handshake') || flags.includes('noaddr')) continue
    const down = flags.includes('fail') ? 'the cluster marks it failed' : null
    nodes.push({ ...address, role: flags.includes('master') ? 'master' : 'replica', down })
  }
  return nodes
}

/** SENTINEL REPLICAS entries: flat [field, value, …] arrays. */
function sentinelReplicas(reply: unknown): RedisNode[] {
  if (!Array.isArray(reply)) return []
  return reply.flatMap((entry): RedisNode[] => {
    if (!Array.isArray(entry)) return []
    const fields = new Map<string, string>()
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), String(entry[i + 1]))
    const port = Number(fields.get('port'))
    const host = fields.get('ip')
    if (!host || !Number.isInteger(port)) return []
    const flags = (fields.get('flags') ?? '').split(',')
    const down = flags.find((flag) => flag === 's_down' || flag === 'o_down' || flag === 'disconnected')
    return [{ host, port, role: 'replica', down: down ? `the sentinel reports it ${down}` : null }]
  })
}

/** Every node of the deployment, as its cluster or its sentinels report it. */
export async function redisNodes(topology: RedisTopology, admin: AdminCredentials): Promise<RedisNode[]> {
  if (topology.kind === 'node') {
    const url = new URL(topology.url)
    return [{ host: url.hostname, port: Number(url.port || 6379), role: 'node', down: null }]
  }
  if (topology.kind === 'cluster') {
    const reply = await firstAnswer(topology.seeds, 'cluster seed node', (client) => client.call('CLUSTER', 'NODES') as Promise<string>, { username: admin.username, password: admin.password })
    return parseClusterNodes(reply)
  }
  // Sentinels are asked without credentials, as the gateways ask them.
  return firstAnswer(topology.sentinels, 'sentinel', async (client) => {
    const master = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', topology.name)) as [string, string] | null
    if (master === null) throw new Error(`it monitors no master named '${topology.name}'`)
    const replicas = sentinelReplicas(await client.call('SENTINEL', 'REPLICAS', topology.name))
    return [{ host: master[0], port: Number(master[1]), role: 'master' as const, down: null }, ...replicas]
  }, {})
}

export interface NodeOutcome {
  readonly node: RedisNode
  /** Null when it was applied. */
  readonly error: string | null
}

/**
 * Runs `apply` on every node over an admin connection of its own, each node whatever happened on
 * the others (a node reported down is tried too: it may be back).
 */
export async function onEveryNode(topology: RedisTopology, admin: AdminCredentials, apply: (client: Redis) => Promise<void>): Promise<NodeOutcome[]> {
  const nodes = await redisNodes(topology, admin)
  return Promise.all(nodes.map(async (node): Promise<NodeOutcome> => {
    const client = connectOnce(topology.kind === 'node' ? topology.url : { host: node.host, port: node.port, username: admin.username, password: admin.password })
    try {
      await client.connect()
      await apply(client)
      return { node, error: null }
    } catch (error) {
      // ioredis messages name the host, never the password.
      return { node, error: node.down ? `${(error as Error).message} (${node.down})` : (error as Error).message }
    } finally {
      client.disconnect()
    }
  }))
}
