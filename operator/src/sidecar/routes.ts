/**
 * The control plane's end of the sidecar stream (protocol in gateway/src/snapshot/sync-protocol.ts):
 * the pod's ServiceAccount token is checked with a TokenReview, the named Deployment's sidecar
 * binding must admit the pod's service account or namespace, then the pod receives its binding's
 * slice of the deployment's snapshot, sealed with a key agreed for this connection only.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import {
  encodeSidecarIdentity,
  HEARTBEAT_INTERVAL_MS,
  SIDECAR_IDENTITY_HEADER,
  SIDECAR_KEY_HEADER,
  SIDECAR_STREAM_PATH,
  sidecarKeyPair,
  sidecarKeyring,
  SNAPSHOT_EVENT,
  SNAPSHOT_SEAL_CONTEXT,
  type GatewaySnapshot,
} from '@gatehouse/gateway/snapshot'
import { SnapshotCompileError } from '../compile/snapshot.ts'
import type { SnapshotPublisher } from '../distribution/publisher.ts'
import { bindingAdmits, parseDeploymentRef, type ResolvedBinding } from './binding.ts'
import { sidecarSlice } from './slice.ts'
import type { PodIdentity, TokenReviewer } from './token-review.ts'

export interface SidecarAdmission {
  reviewToken: TokenReviewer
  resolveBinding(namespace: string, name: string): Promise<ResolvedBinding | null>
}

export interface SidecarRoutesOptions extends SidecarAdmission {
  deployments: { get(deployment: string): Promise<SnapshotPublisher> }
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

function refuse(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const type = status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 409 ? 'conflict_error' : status === 503 ? 'service_unavailable_error' : 'invalid_request_error'
  if (status === 503) reply.header('retry-after', '5')
  return reply.code(status).send({ error: { message, type, param: null, code } })
}

function bearer(header: string | undefined): string | null {
  return header?.startsWith('Bearer ') && header.length > 7 ? header.slice(7).trim() : null
}

export function registerSidecarRoutes(app: FastifyInstance, options: SidecarRoutesOptions): void {
  const heartbeatMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS
  app.get(SIDECAR_STREAM_PATH, { config: { publicRoute: true } }, async (request, reply) => {
    const query = streamQuery.safeParse(request.query)
    const reference = query.success ? parseDeploymentRef(query.data.deployment, '') : null
    if (!query.success || reference === null) return refuse(reply, 400, 'invalid_parameter', 'deployment (namespace/name) and after are required')
    const token = bearer(request.headers.authorization)
    if (token === null) return refuse(reply, 401, 'invalid_token', 'A ServiceAccount token (audience gatehouse) is required')
    const sidecarPublic = request.headers[SIDECAR_KEY_HEADER]
    if (typeof sidecarPublic !== 'string') return refuse(reply, 400, 'invalid_parameter', `${SIDECAR_KEY_HEADER} is required`)

    let identity: PodIdentity | null
    let resolved: ResolvedBinding | null
    try {
      identity = await options.reviewToken(token)
      resolved = identity === null ? null : await options.resolveBinding(reference.namespace, reference.name)
    } catch (error) {
      // The API server is a dependency: its failure is a 503, never a refusal of the pod.
      options.onError(error, 'a sidecar could not be checked against the API server')
      return refuse(reply, 503, 'dependency_unavailable', 'The Kubernetes API server could not check the token; try again')
    }
    if (identity === null) return refuse(reply, 401, 'invalid_token', 'The token is not a valid ServiceAccount token for audience gatehouse')
    const what = `deployments.gatehouse.dev ${reference.namespace}/${reference.name}`
    if (resolved === null) return refuse(reply, 404, 'deployment_not_found', `no ${what}`)
    if (resolved.binding === null || !bindingAdmits(resolved.binding, identity.namespace, identity.serviceAccount)) {
      return refuse(reply, 403, 'forbidden', `${what} does not admit service account ${identity.namespace}/${identity.serviceAccount} as a sidecar`)
    }

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
    let lastSent = query.data.after
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
    response.on('close', () => {
      clearInterval(heartbeat)
      clearTimeout(expiry)
      unsubscribe()
    })
  })
}
