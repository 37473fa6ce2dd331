/**
 * Who a sidecar is: its pod's projected ServiceAccount token checked by the API server
 * (TokenReview, audience gatehouse). Only a token the API server itself vouches for, issued for
 * our audience, to a service account, is accepted; results are cached briefly by a digest of the
 * token so reconnect storms do not each cost an API call.
 */
import { createHash } from 'node:crypto'
import { SIDECAR_TOKEN_AUDIENCE } from '@gatehouse/gateway/snapshot'
import type { KubeRest } from '../kube/client.ts'

export interface PodIdentity {
  namespace: string
  serviceAccount: string
  /** Present when the token is bound to a pod (projected tokens are). */
  podName: string | null
  podUid: string | null
}

export type TokenReviewer = (token: string) => Promise<PodIdentity | null>

interface TokenReviewStatus {
  authenticated?: boolean
  audiences?: string[]
  user?: { username?: string; extra?: Record<string, string[]> }
}

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/
const CACHE_TTL_MS = 30_000
const MAX_CACHED = 5_000

/** Reads a TokenReview status; null unless it is an authenticated service account for our audience. */
export function identityFromReview(status: TokenReviewStatus): PodIdentity | null {
  if (status.authenticated !== true) return null
  if (!(status.audiences ?? []).includes(SIDECAR_TOKEN_AUDIENCE)) return null
  const match = SERVICE_ACCOUNT_USER.exec(status.user?.username ?? '')
  if (!match) return null
  const extra = status.user?.extra ?? {}
  return {
    namespace: match[1]!,
    serviceAccount: match[3]!,
    podName: extra['authentication.kubernetes.io/pod-name']?.[0] ?? null,
    podUid: extra['authentication.kubernetes.io/pod-uid']?.[0] ?? null,
  }
}

export function kubeTokenReviewer(kube: KubeRest, now: () => number = Date.now): TokenReviewer {
  const cache = new Map<string, { identity: PodIdentity | null; atMs: number }>()
  return async (token) => {
    const digest = createHash('sha256').update(token).digest('base64')
    const cached = cache.get(digest)
    if (cached && now() - cached.atMs < CACHE_TTL_MS) return cached.identity
    const review = await kube.call<{ status?: TokenReviewStatus }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences: [SIDECAR_TOKEN_AUDIENCE] },
    })
    const identity = identityFromReview(review.status ?? {})
    if (cache.size >= MAX_CACHED) cache.clear()
    cache.set(digest, { identity, atMs: now() })
    return identity
  }
}
