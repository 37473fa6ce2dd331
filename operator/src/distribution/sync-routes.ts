/**
 * The control plane's end of the snapshot stream (protocol in gateway/src/snapshot/sync-protocol.ts,
 * part of the snapshot contract). Gateways authenticate with the shared gateway token; each stream gets the
 * latest snapshot at once when it is newer than what the gateway has, then every new one.
 */
import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import {
  HEARTBEAT_INTERVAL_MS,
  SNAPSHOT_EVENT,
  SNAPSHOT_SEAL_CONTEXT,
  SYNC_ACK_PATH,
  SYNC_GATEWAYS_PATH,
  SYNC_STREAM_PATH,
  type GatewaySnapshot,
  type Keyring,
} from '@gatehouse/gateway/snapshot'
import type { GatewayRegistry } from './gateway-registry.ts'
import type { SnapshotPublisher } from './publisher.ts'
import { snapshotTracing } from '../telemetry/spans.ts'

export interface SyncRoutesOptions {
  publisher: SnapshotPublisher
  /** Per-deployment publishers, for gateways that name their deployment (`?deployment=<slug>`). */
  deployments?: { get(deployment: string): Promise<SnapshotPublisher> }
  registry: GatewayRegistry
  keyring: Keyring
  gatewayToken: string
  heartbeatIntervalMs?: number
}

const gatewayId = z.string().min(1).max(255).regex(/^[A-Za-z0-9._:-]+$/)
const streamQuery = z.object({
  gateway_id: gatewayId,
  after: z.coerce.number().int().min(-1).default(-1),
  deployment: z.string().min(1).max(255).regex(/^[a-z0-9][a-z0-9_.-]*$/).optional(),
})
const ackBody = z.object({
  gateway_id: gatewayId,
  generation: z.number().int().min(-1),
  status: z.enum(['ack', 'nack']),
  problems: z.array(z.object({ path: z.string().max(1000), message: z.string().max(2000) })).max(100).optional(),
})

/** Constant-time check of `Authorization: Bearer <gateway token>`. */
export function sameToken(presented: string | undefined, expected: string): boolean {
  if (!presented?.startsWith('Bearer ')) return false
  const given = Buffer.from(presented.slice(7))
  const wanted = Buffer.from(expected)
  return given.length === wanted.length && timingSafeEqual(given, wanted)
}

function refuse(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ error: { message, type: status === 401 ? 'authentication_error' : 'invalid_request_error', param: null, code } })
}

export function registerSyncRoutes(app: FastifyInstance, options: SyncRoutesOptions): void {
  const { publisher, registry, keyring } = options
  const heartbeatMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS
  const authorized = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (sameToken(request.headers.authorization, options.gatewayToken)) return true
    refuse(reply, 401, 'invalid_gateway_token', 'A valid gateway token is required')
    return false
  }

  app.get(SYNC_STREAM_PATH, { config: { publicRoute: true } }, async (request, reply) => {
    if (!authorized(request, reply)) return reply
    const query = streamQuery.safeParse(request.query)
    if (!query.success) return refuse(reply, 400, 'invalid_parameter', 'gateway_id and after are required')
    const { gateway_id: id, after, deployment } = query.data
    let source = publisher
    if (deployment !== undefined) {
      if (!options.deployments) return refuse(reply, 400, 'invalid_parameter', 'this control plane does not serve per-deployment snapshots')
      try {
        source = await options.deployments.get(deployment)
      } catch {
        return refuse(reply, 404, 'deployment_not_found', `no deployment ${deployment} (or its snapshot cannot be compiled)`)
      }
    }
    reply.hijack()
    const response = reply.raw
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    const send = (snapshot: GatewaySnapshot): void => {
      const sealed = keyring.seal(JSON.stringify(snapshot), SNAPSHOT_SEAL_CONTEXT)
      response.write(`event: ${SNAPSHOT_EVENT}\nid: ${snapshot.generation}\ndata: ${JSON.stringify(sealed)}\n\n`)
    }
    let lastSent = after
    const unsubscribe = source.subscribe((snapshot) => {
      if (snapshot.generation <= lastSent) return
      lastSent = snapshot.generation
      send(snapshot)
    })
    const heartbeat = setInterval(() => response.write(': heartbeat\n\n'), heartbeatMs)
    registry.connected(id, true)
    response.on('close', () => {
      clearInterval(heartbeat)
      unsubscribe()
      registry.connected(id, false)
    })
  })

  app.post(SYNC_ACK_PATH, { config: { publicRoute: true } }, async (request, reply) => {
    if (!authorized(request, reply)) return reply
    const body = ackBody.safeParse(request.body)
    if (!body.success) return refuse(reply, 400, 'invalid_parameter', 'gateway_id, generation and status are required')
    const { gateway_id: id, generation, status, problems } = body.data
    if (status === 'ack') registry.ack(id, generation)
    else registry.nack(id, generation, problems ?? [])
    snapshotTracing.acknowledged(id, generation, status, Date.now())
    return reply.code(204).send()
  })

  app.get(SYNC_GATEWAYS_PATH, { config: { publicRoute: true } }, async (request, reply) => {
    if (!authorized(request, reply)) return reply
    return { object: 'list', data: registry.list(), latest_generation: publisher.latest?.generation ?? null }
  })
}
