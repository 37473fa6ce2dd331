/**
 * The snapshot stream between the control plane and gateways. The control plane serves
 *   GET  {controlPlane}/v1/gateway-sync/stream?gateway_id=ID&after=GENERATION   (text/event-stream)
 *   POST {controlPlane}/v1/gateway-sync/acks   { gateway_id, generation, status: ack|nack, problems? }
 * both authenticated with `Authorization: Bearer <GATEHOUSE_GATEWAY_TOKEN>`. Each `snapshot` event
 * carries the whole snapshot sealed with the shared keyring (context `snapshot`), so credentials
 * never cross the network or touch a disk in plain text. A gateway resumes with the last
 * generation it applied and receives only something newer. A gateway of a named deployment adds
 * `&deployment=SLUG` (GATEHOUSE_DEPLOYMENT) and receives that deployment's snapshot: only the
 * workspaces it serves (404 when there is no such deployment).
 */
export const SYNC_STREAM_PATH = '/v1/gateway-sync/stream'
export const SYNC_ACK_PATH = '/v1/gateway-sync/acks'
/** Per-gateway status (generation applied, when, last NACK), for operators and the Kubernetes status. */
export const SYNC_GATEWAYS_PATH = '/v1/gateway-sync/gateways'
export const SNAPSHOT_EVENT = 'snapshot'
export const SNAPSHOT_SEAL_CONTEXT = 'snapshot'
/** The stream sends a comment this often so dead connections are noticed by both sides. */
export const HEARTBEAT_INTERVAL_MS = 10_000

export interface SnapshotAck {
  gateway_id: string
  generation: number
  status: 'ack' | 'nack'
  problems?: Array<{ path: string; message: string }>
}

/**
 * Sidecars (a gateway injected into an application's pod) hold no gateway token and no keyring.
 * They subscribe at SIDECAR_STREAM_PATH?deployment=NAMESPACE/NAME&after=GENERATION with
 * `Authorization: Bearer <the pod's projected ServiceAccount token, audience gatehouse>` and an
 * ephemeral X25519 public key in SIDECAR_KEY_HEADER. The control plane checks the token with a
 * TokenReview and the Deployment's sidecar binding, answers with its own ephemeral public key in
 * the same header and the pod's identity in SIDECAR_IDENTITY_HEADER, and seals every snapshot with
 * the key both sides derive (see sidecar-seal.ts). The snapshot is the binding's slice: one
 * workspace, and one API key record standing for the pod (`sidecarKeyHash`), which no presented key
 * can match.
 */
export const SIDECAR_STREAM_PATH = '/v1/gateway-sync/sidecar/stream'
export const SIDECAR_KEY_HEADER = 'x-gateway-sidecar-key'
export const SIDECAR_IDENTITY_HEADER = 'x-gateway-sidecar-identity'
/** The audience of the projected token the sidecar presents. */
export const SIDECAR_TOKEN_AUDIENCE = 'gatehouse'
/**
 * A sidecar's ACKs (body: SnapshotAck without gateway_id; the control plane names it
 * `sidecar:NAMESPACE/POD`) and usage batches (the ingest route's body), each with the same bearer
 * token and `?deployment=NAMESPACE/NAME` as its stream.
 */
export const SIDECAR_ACK_PATH = '/v1/gateway-sync/sidecar/acks'
export const SIDECAR_USAGE_PATH = '/v1/gateway-sync/sidecar/usage'
/**
 * Sent on the sidecar stream before the first snapshot, sealed like it (context SIDECAR_SETTINGS_EVENT):
 * the shared-counter settings (`SidecarSettings`) the control plane hands to admitted sidecars, so
 * that no Redis credential is written into the pod spec.
 */
export const SIDECAR_SETTINGS_EVENT = 'sidecar-settings'

/** The Redis connection of the limit and budget counters, in the names of limits/from-env.ts. */
export interface SidecarSettings {
  counters: Partial<Record<(typeof SIDECAR_COUNTER_SETTINGS)[number], string>>
}

/** The settings of limits/from-env.ts a sidecar receives (only these are ever sent). */
export const SIDECAR_COUNTER_SETTINGS = [
  'GATEHOUSE_REDIS_URL',
  'GATEHOUSE_REDIS_SENTINELS',
  'GATEHOUSE_REDIS_SENTINEL_NAME',
  'GATEHOUSE_REDIS_CLUSTER_NODES',
  'GATEHOUSE_REDIS_USERNAME',
  'GATEHOUSE_REDIS_PASSWORD',
  'GATEHOUSE_REDIS_TIMEOUT_MS',
  'GATEHOUSE_LIMITS_KEY_PREFIX',
] as const

/**
 * Set by the control plane on a 404 for a path it has no route for, so a gateway forwarding admin
 * routes answers "no such route" in its own words (a mistyped data-plane path is not an admin one).
 */
export const ADMIN_UNROUTED_HEADER = 'x-gatehouse-admin-unrouted'
