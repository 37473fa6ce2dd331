/**
 * The first stages every authenticated data-plane request runs: take the current runtime (kept
 * until the request ends), read tracing and metadata headers, authenticate, and tie an abort signal
 * to the client connection.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'
import type { RuntimeHolder } from '../runtime/holder.ts'
import { authenticateKey, presentedKey, requireDataPlaneKey } from './authenticate.ts'
import { authenticateSidecar, type SidecarAuth } from './authenticate-sidecar.ts'
import { readMetadata, type RequestContext, type Trace } from './context.ts'

export interface PipelineDeps {
  holder: RuntimeHolder
  pepper: string
  now: () => number
  /** Sidecar mode: loopback calls run as the pod's identity, with no key. */
  sidecar?: SidecarAuth
}

declare module 'fastify' {
  interface FastifyRequest {
    gatewayTrace: Trace
  }
}

function keyPrincipal(runtime: RuntimeConfig, pepper: string, request: FastifyRequest, nowMs: number) {
  const key = authenticateKey(runtime, presentedKey(request.headers), pepper, nowMs)
  return { key, workspaceId: requireDataPlaneKey(key, runtime), identity: undefined }
}

function sidecarPrincipal(runtime: RuntimeConfig, auth: SidecarAuth, request: FastifyRequest) {
  const principal = authenticateSidecar(runtime, auth, request.socket.remoteAddress)
  return { key: principal.key, workspaceId: principal.workspaceId, identity: principal.annotations }
}

export function beginRequest(deps: PipelineDeps, request: FastifyRequest, reply: FastifyReply): RequestContext {
  const runtime = deps.holder.current
  if (!runtime) throw new GatewayError('not_ready', 'The gateway has not loaded its configuration yet', { headers: { 'retry-after': '1' } })
  const now = deps.now()
  const { key, workspaceId, identity } = deps.sidecar ? sidecarPrincipal(runtime, deps.sidecar, request) : keyPrincipal(runtime, deps.pepper, request, now)
  const metadata = readMetadata(request.headers)

  const controller = new AbortController()
  const response = reply.raw
  response.once('close', () => {
    if (!response.writableFinished) controller.abort()
  })
  return { trace: request.gatewayTrace, metadata, runtime, key, workspaceId, signal: controller.signal, startedAtMs: now, ...(identity ? { identity } : {}) }
}
