/**
 * Registers every row of the passthrough table with one handler: authenticate, pick the provider
 * like the inference routes do, then either run the adapter's own operation for the group (rerank,
 * OCR) or forward the request to a provider that serves OpenAI's paths. Multipart bodies reach the
 * handler as the raw request stream and go upstream as a stream.
 */
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError, invalidParameter } from '../../errors.ts'
import type { JsonOperation, ProviderAdapter } from '../../providers/adapter.ts'
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { attemptJson } from '../../pipeline/dispatch.ts'
import { forwardToProvider, relayedResponseHeaders } from '../../pipeline/passthrough.ts'
import { resolveDirectTarget, type RouteTarget } from '../../pipeline/resolve-route.ts'
import { transportError, type UpstreamResponse } from '../../upstream/transport.ts'
import { relaySseBytes, startSse } from '../sse-writer.ts'
import { responseHeaders } from './inference.ts'
import { passthroughRoutes, type PassthroughOperation, type PassthroughRoute } from './passthrough-table.ts'

type JsonBody = Record<string, unknown>
type GroupOperation = JsonOperation<JsonBody & { model: string }, unknown>

function isJsonObject(value: unknown): value is JsonBody {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Readable)
}

function requestBody(route: PassthroughRoute, body: unknown): JsonBody | Readable | undefined {
  if (route.body === 'none' || body === undefined || body === null) return undefined
  if (body instanceof Readable) {
    if (route.body !== 'multipart') throw new GatewayError('unsupported_media_type', `Send the body of ${route.method} ${route.path} as application/json`)
    return body
  }
  if (!isJsonObject(body)) throw invalidParameter('body', 'The request body must be a JSON object')
  return body
}

/** Checks array query parameters with a closed set of values, in any spelling (`include`, `include[]`, `include[0]`). */
function checkQueryEnums(route: PassthroughRoute, url: string): void {
  if (!route.queryEnums) return
  const queryAt = url.indexOf('?')
  if (queryAt === -1) return
  const params = new URLSearchParams(url.slice(queryAt + 1))
  for (const [name, allowed] of Object.entries(route.queryEnums)) {
    for (const [key, value] of params) {
      if (key !== name && !(key.startsWith(`${name}[`) && key.endsWith(']'))) continue
      if (!allowed.includes(value)) throw invalidParameter(name, `'${value}' is not a valid '${name}' value; expected one of ${allowed.join(', ')}`)
    }
  }
}

/**
 * The adapter's own implementation of a group, when it has one (Cohere rerank, Mistral OCR). The
 * route knows the body only as a JSON object with a model; the operation reads its own fields.
 */
function adapterOperation(adapter: ProviderAdapter, name: PassthroughOperation | undefined): GroupOperation | undefined {
  return name === undefined ? undefined : (adapter[name] as GroupOperation | undefined)
}

function requestModel(route: PassthroughRoute, request: FastifyRequest, body: JsonBody | Readable | undefined): string | undefined {
  if (route.modelParam !== undefined) return (request.params as Record<string, string | undefined>)[route.modelParam]
  return isJsonObject(body) && typeof body.model === 'string' ? body.model : undefined
}

/** The same path below the provider's base URL, query untouched; a model in the path is the one the provider knows. */
function upstreamPath(route: PassthroughRoute, url: string, target: RouteTarget): string {
  const queryAt = url.indexOf('?')
  const query = queryAt === -1 ? '' : url.slice(queryAt)
  const path = route.modelParam === undefined ? url.slice(0, queryAt === -1 ? undefined : queryAt) : route.path.replace(`:${route.modelParam}`, encodeURIComponent(target.upstreamModel))
  return path.slice('/v1'.length) + query
}

/** A body's `@slug/model` becomes the model the provider knows; nothing else in it changes. */
function upstreamBody(body: JsonBody | Readable | undefined, target: RouteTarget): JsonBody | Readable | undefined {
  if (!isJsonObject(body) || typeof body.model !== 'string' || body.model === target.upstreamModel) return body
  return { ...body, model: target.upstreamModel }
}

function gatewayHeaders(context: RequestContext, target: RouteTarget): Record<string, string> {
  return responseHeaders(target, [], context.trace.traceId)
}

async function relay(route: PassthroughRoute, upstream: UpstreamResponse, reply: FastifyReply, context: RequestContext, target: RouteTarget): Promise<void> {
  const isEventStream = route.response === 'sse' && (upstream.headers['content-type'] ?? '').startsWith('text/event-stream')
  if (isEventStream) {
    reply.hijack()
    startSse(reply.raw, upstream.status, { ...relayedResponseHeaders(upstream.headers, false), ...gatewayHeaders(context, target) })
    await relaySseBytes(reply.raw, upstream.body, (error) => transportError(error, context.signal))
    return
  }
  // JSON and binary answers are piped as they arrive; fastify ends the reply if the provider cuts it.
  await reply
    .code(upstream.status)
    .headers({ ...relayedResponseHeaders(upstream.headers), ...gatewayHeaders(context, target) })
    .send(upstream.body)
}

async function handle(deps: PipelineDeps, route: PassthroughRoute, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const context = beginRequest(deps, request, reply)
  const body = requestBody(route, request.body)
  checkQueryEnums(route, request.url)
  const target = resolveDirectTarget(context.runtime, context.workspaceId, request.headers, requestModel(route, request, body))
  const { adapter } = target.provider

  const operation = adapterOperation(adapter, route.operation)
  if (operation) {
    if (!isJsonObject(body) || typeof body.model !== 'string') throw new GatewayError('missing_parameter', `'model' is required for ${route.group}`, { param: 'model' })
    const outcome = await attemptJson(operation, target, body as JsonBody & { model: string }, { signal: context.signal })
    await reply.headers(gatewayHeaders(context, target)).send(outcome.response)
    return
  }
  if (!adapter.passthrough) {
    throw new GatewayError('unsupported_operation', `Provider '@${target.provider.record.slug}' (${adapter.kind}) does not serve ${route.group} (${route.method} ${route.path})`)
  }
  const upstream = await forwardToProvider(
    target,
    { method: route.method, path: upstreamPath(route, request.url, target), headers: request.headers, body: upstreamBody(body, target) },
    context.signal,
  )
  await relay(route, upstream, reply, context, target)
}

export function registerPassthroughRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  app.register(async (scope) => {
    // Hands the request stream itself to the handler: uploads are never held in memory whole, and
    // no body limit applies beyond the provider's own.
    scope.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload))
    for (const route of passthroughRoutes) {
      scope.route({ method: route.method, url: route.path, handler: (request, reply) => handle(deps, route, request, reply) })
    }
  })
}
