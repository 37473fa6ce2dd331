/**
 * The first stages every authenticated data-plane request runs: take the current runtime (kept
 * until the request ends), read tracing and metadata headers, authenticate, and tie an abort signal
 * to the client connection.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.ts'
import type { RuntimeHolder } from '../runtime/holder.ts'
import { authenticateKey, presentedKey, refuseRepeatedCredentials, requireDataPlaneKey } from './authenticate.ts'
import { readMetadata, type RequestContext, type Trace } from './context.ts'

export interface PipelineDeps {
  holder: RuntimeHolder
  pepper: string
  now: () => number
}

declare module 'fastify' {
  interface FastifyRequest {
    gatewayTrace: Trace
  }
}

export function beginRequest(deps: PipelineDeps, request: FastifyRequest, reply: FastifyReply): RequestContext {
  const runtime = deps.holder.current
  if (!runtime) throw new GatewayError('not_ready', 'The gateway has not loaded its configuration yet', { headers: { 'retry-after': '1' } })
  const now = deps.now()
  refuseRepeatedCredentials(request.raw.rawHeaders)
  const key = authenticateKey(runtime, presentedKey(request.headers), deps.pepper, now)
  const workspaceId = requireDataPlaneKey(key, runtime)
  const metadata = readMetadata(request.headers)

  const controller = new AbortController()
  const response = reply.raw
  response.once('close', () => {
    if (!response.writableFinished) controller.abort()
  })
  return { trace: request.gatewayTrace, metadata, runtime, key, workspaceId, signal: controller.signal, startedAtMs: now }
}
