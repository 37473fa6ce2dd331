/**
 * The control plane's end of the sidecar stream (protocol in gateway/src/snapshot/sync-protocol.ts):
 * the pod's ServiceAccount token is checked with a TokenReview, the named Deployment's sidecar
 * binding must admit the pod's service account or namespace, then the pod receives its binding's
 * slice of the deployment's snapshot, sealed with a key agreed for this connection only (after the
 * shared-counter settings, when this control plane has any). The same admission guards the
 * sidecar's ACKs (into the gateway registry, as `sidecar:NAMESPACE/POD`) and its usage batches
 * (stored only for the bound workspace, with the principal the token proved).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import {
  encodeSidecarIdentity,
  HEARTBEAT_INTERVAL_MS,
  SIDECAR_IDENTITY_HEADER,
  SIDECAR_ACK_PATH,
  SIDECAR_KEY_HEADER,
  SIDECAR_SETTINGS_EVENT,
  SIDECAR_STREAM_PATH,
  SIDECAR_USAGE_PATH,
  sidecarKeyPair,
  sidecarKeyring,
  SNAPSHOT_EVENT,
  SNAPSHOT_SEAL_CONTEXT,
  usageBatch,
  type GatewaySnapshot,
  type SidecarSettings,
  type UsageIngestResult,
  type UsageRecord,
} from '@gatehouse/gateway/snapshot'
import { SnapshotCompileError } from '../compile/snapshot.ts'
import type { GatewayRegistry } from '../distribution/gateway-registry.ts'
import type { SnapshotPublisher } from '../distribution/publisher.ts'
import { checkRecords, USAGE_BODY_LIMIT_BYTES } from '../distribution/usage-routes.ts'
import type { Store } from '../store/index.ts'
import { bindingAdmits, parseDeploymentRef, type ResolvedBinding } from './binding.ts'
import { sidecarSlice } from './slice.ts'
import type { PodIdentity, TokenReviewer } from './token-review.ts'

export interface SidecarAdmission {
  reviewToken: TokenReviewer
  resolveBinding(namespace: string, name: string): Promise<ResolvedBinding | null>
}

export interface SidecarRoutesOptions extends SidecarAdmission {
  deployments: { get(deployment: string): Promise<SnapshotPublisher> }
  /** Where sidecars' ACKs go (the central gateways' registry): they count towards `Programmed`. */
  registry?: GatewayRegistry
  /** Where sidecars' usage records are stored; without it the usage route is not served. */
  store?: Store
  /** Handed, sealed, to every admitted sidecar: the shared counters' connection (sidecar/settings.ts). */
  settings?: SidecarSettings | null
  now?: () => number
  onError(error: unknown, message: string): void
  heartbeatIntervalMs?: number
  maxStreamAgeMs?: number
}

/**
 * A sidecar stream is closed after this long, so the sidecar reconnects with its current token and
 * a binding that stopped admitting it takes effect (the binding is not part of the snapshot).
 */
export const SIDECAR_STREAM_MAX_AGE_MS = 10 * 60_000

const streamQuery = z.object({
  deployment: z.string().min(3).max(317),
  after: z.coerce.number().int().min(-1).default(-1),
})
const ackBody = z.object({
  generation: z.number().int().min(-1),
  status: z.enum(['ack', 'nack']),
  problems: z.array(z.object({ path: z.string().max(1000), message: z.string().max(2000) })).max(100).optional(),
})

function refuse(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const type = status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 409 ? 'conflict_error' : status === 503 ? 'service_unavailable_error' : 'invalid_request_error'
  if (status === 503) reply.header('retry-after', '5')
  return reply.code(status).send({ error: { message, type, param: null, code } })
}

function bearer(header: string | undefined): string | null {
  return header?.startsWith('Bearer ') && header.length > 7 ? header.slice(7).trim() : null
}

interface Admitted {
  identity: PodIdentity
  resolved: ResolvedBinding
  what: string
  after: number
}

/** The registry's name for a sidecar: one per pod (the service account when the token names no pod). */
export function sidecarGatewayId(identity: PodIdentity): string {
  return `sidecar:${identity.namespace}/${identity.podName ?? identity.serviceAccount}`
}

/** Token, TokenReview and binding, as the stream, ACK and usage routes all need them; null when refused (answered). */
async function admit(request: FastifyRequest, reply: FastifyReply, options: SidecarRoutesOptions): Promise<Admitted | null> {
  const query = streamQuery.safeParse(request.query)
  const reference = query.success ? parseDeploymentRef(query.data.deployment, '') : null
  if (!query.success || reference === null) {
    refuse(reply, 400, 'invalid_parameter', 'deployment (namespace/name) is required')
    return null
  }
  const token = bearer(request.headers.authorization)
  if (token === null) {
    refuse(reply, 401, 'invalid_token', 'A ServiceAccount token (audience gatehouse) is required')
    return null
  }
  let identity: PodIdentity | null
  let resolved: ResolvedBinding | null
  try {
    identity = await options.reviewToken(token)
    resolved = identity === null ? null : await options.resolveBinding(reference.namespace, reference.name)
  } catch (error) {
    // The API server is a dependency: its failure is a 503, never a refusal of the pod.
    options.onError(error, 'a sidecar could not be checked against the API server')
    refuse(reply, 503, 'dependency_unavailable', 'The Kubernetes API server could not check the token; try again')
    return null
  }
  if (identity === null) {
    refuse(reply, 401, 'invalid_token', 'The token is not a valid ServiceAccount token for audience gatehouse')
    return null
  }
  const what = `deployments.gatehouse.dev ${reference.namespace}/${reference.name}`
  if (resolved === null) {
    refuse(reply, 404, 'deployment_not_found', `no ${what}`)
    return null
  }
  if (resolved.binding === null || !bindingAdmits(resolved.binding, identity.namespace, identity.serviceAccount)) {
    refuse(reply, 403, 'forbidden', `${what} does not admit service account ${identity.namespace}/${identity.serviceAccount} as a sidecar`)
    return null
  }
  return { identity, resolved, what, after: query.data.after }
}

export function registerSidecarRoutes(app: FastifyInstance, options: SidecarRoutesOptions): void {
  const heartbeatMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS
  const now = options.now ?? Date.now
  app.get(SIDECAR_STREAM_PATH, { config: { publicRoute: true } }, async (request, reply) => {
    const sidecarPublic = request.headers[SIDECAR_KEY_HEADER]
    const admitted = await admit(request, reply, options)
    if (admitted === null) return reply
    if (typeof sidecarPublic !== 'string') return refuse(reply, 400, 'invalid_parameter', `${SIDECAR_KEY_HEADER} is required`)
    const { identity, resolved, what } = admitted

    let publisher: SnapshotPublisher
    let first: { snapshot: GatewaySnapshot; workspaceId: string }
    const slice = (snapshot: GatewaySnapshot) => sidecarSlice(snapshot, identity, resolved.workspaceSlug)
    try {
      publisher = await options.deployments.get(resolved.deploymentSlug)
      first = slice(publisher.latest!)
    } catch (error) {
      // The binding names a workspace the deployment does not serve: the objects disagree.
      if (error instanceof SnapshotCompileError && error.problems.some((p) => p.path === 'sidecar.workspace')) {
        return refuse(reply, 409, 'conflict', `${what}: ${error.problems[0]!.message}`)
      }
      options.onError(error, 'a sidecar slice could not be compiled')
      return refuse(reply, 503, 'not_ready', `${what} has no snapshot yet`)
    }

    let keyring
    const own = sidecarKeyPair()
    try {
      keyring = sidecarKeyring(own, sidecarPublic, sidecarPublic, own.publicKey)
    } catch {
      return refuse(reply, 400, 'invalid_parameter', `${SIDECAR_KEY_HEADER} must be an X25519 public key (SPKI, base64url)`)
    }
    reply.hijack()
    const response = reply.raw
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      [SIDECAR_KEY_HEADER]: own.publicKey,
      [SIDECAR_IDENTITY_HEADER]: encodeSidecarIdentity({ namespace: identity.namespace, serviceAccount: identity.serviceAccount, podName: identity.podName, workspaceId: first.workspaceId }),
    })
    if (options.settings) {
      // Before any snapshot, so the sidecar counts in the shared store from its first request on.
      const sealed = keyring.seal(JSON.stringify(options.settings), SIDECAR_SETTINGS_EVENT)
      response.write(`event: ${SIDECAR_SETTINGS_EVENT}\ndata: ${JSON.stringify(sealed)}\n\n`)
    }
    let lastSent = admitted.after
    const send = (snapshot: GatewaySnapshot): void => {
      if (snapshot.generation <= lastSent) return
      let sliced: GatewaySnapshot
      try {
        sliced = slice(snapshot).snapshot
      } catch (error) {
        options.onError(error, 'a sidecar slice could not be compiled; the sidecar keeps its last one')
        return
      }
      lastSent = snapshot.generation
      const sealed = keyring.seal(JSON.stringify(sliced), SNAPSHOT_SEAL_CONTEXT)
      response.write(`event: ${SNAPSHOT_EVENT}\nid: ${snapshot.generation}\ndata: ${JSON.stringify(sealed)}\n\n`)
    }
    const unsubscribe = publisher.subscribe(send)
    const heartbeat = setInterval(() => response.write(': heartbeat\n\n'), heartbeatMs)
    const expiry = setTimeout(() => response.end(), options.maxStreamAgeMs ?? SIDECAR_STREAM_MAX_AGE_MS)
    const gatewayId = sidecarGatewayId(identity)
    options.registry?.connected(gatewayId, true)
    response.on('close', () => {
      clearInterval(heartbeat)
      clearTimeout(expiry)
      unsubscribe()
      options.registry?.connected(gatewayId, false)
    })
  })

  const registry = options.registry
  if (registry) {
    app.post(SIDECAR_ACK_PATH, { config: { publicRoute: true } }, async (request, reply) => {
      const admitted = await admit(request, reply, options)
      if (admitted === null) return reply
      const body = ackBody.safeParse(request.body)
      if (!body.success) return refuse(reply, 400, 'invalid_parameter', 'generation and status are required')
      const { generation, status, problems } = body.data
      const gatewayId = sidecarGatewayId(admitted.identity)
      if (status === 'ack') registry.ack(gatewayId, generation)
      else registry.nack(gatewayId, generation, problems ?? [])
      return reply.code(204).send()
    })
  }

  const store = options.store
  if (store) {
    app.post(SIDECAR_USAGE_PATH, { config: { publicRoute: true }, bodyLimit: USAGE_BODY_LIMIT_BYTES }, async (request, reply) => {
      const admitted = await admit(request, reply, options)
      if (admitted === null) return reply
      const batch = usageBatch.safeParse(request.body)
      if (!batch.success) return refuse(reply, 400, 'invalid_parameter', 'the body must be {"records": [...]} with 1 to 1000 records')
      let workspaceId: string | undefined
      try {
        const publisher = await options.deployments.get(admitted.resolved.deploymentSlug)
        workspaceId = publisher.latest?.workspaces.find((w) => w.slug === admitted.resolved.workspaceSlug)?.id
      } catch (error) {
        options.onError(error, 'a sidecar usage batch could not be checked against its deployment')
      }
      if (workspaceId === undefined) return refuse(reply, 503, 'not_ready', `${admitted.what} has no snapshot yet`)
      // A pod speaks for its own workspace and identity only: what the token proved replaces what it wrote.
      const { identity } = admitted
      const principal = { kind: 'sidecar', id: `sidecar:${identity.namespace}/${identity.serviceAccount}`, 'k8s.namespace.name': identity.namespace, 'k8s.serviceaccount.name': identity.serviceAccount, ...(identity.podName ? { 'k8s.pod.name': identity.podName } : {}) }
      const ours: UsageRecord[] = []
      const rejected: UsageIngestResult['rejected'] = []
      batch.data.records.forEach((value, index) => {
        const checked = checkRecords([value], now())
        const record = checked.records[0]
        if (!record) rejected.push({ index, message: checked.rejected[0]!.message })
        else if (record.workspaceId !== workspaceId) rejected.push({ index, message: 'workspaceId: not the workspace this sidecar is bound to' })
        else ours.push({ ...record, annotations: { ...record.annotations, principal } })
      })
      let outcome
      try {
        outcome = await store.usageLogs.ingest(ours)
      } catch (error) {
        options.onError(error, 'storing sidecar usage records failed')
        return refuse(reply, 503, 'dependency_unavailable', 'the usage store is unavailable; retry shortly')
      }
      const result: UsageIngestResult = { ...outcome, rejected }
      return result
    })
  }
}
