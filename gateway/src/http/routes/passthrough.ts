/**
 * Registers every row of the passthrough table with one handler: authenticate, pick the provider
 * like the inference routes do, then either run the adapter's own operation for the group (rerank,
 * OCR) or forward the request to a provider that serves OpenAI's paths. Multipart bodies reach the
 * handler as the raw request stream and go upstream as a stream.
 */
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { GatewayError, invalidParameter } from '../../core/errors.ts'
import type { JsonOperation, ProviderAdapter } from '../../providers/adapter.ts'
import type { PipelineDeps } from '../../pipeline/build.ts'
import { attemptJson } from '../../pipeline/dispatch.ts'
import { forwardToProvider, relayedResponseHeaders } from '../../pipeline/passthrough.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { EndpointType } from '../../pipeline/stage.ts'
import type { RouteTarget } from '../../routing/target.ts'
import { OPENAI_FORMAT, pipelineHandler } from '../pipeline-route.ts'
import { RelayMetering, relayMeterOf } from './relay-metering.ts'
import { passthroughRoutes, type PassthroughOperation, type PassthroughRoute } from './passthrough-table.ts'

type JsonBody = Record<string, unknown>
type GroupOperation = JsonOperation<JsonBody & { model: string }, unknown>

const ENDPOINT_TYPES: Readonly<Record<string, EndpointType>> = {
  responses: 'responses',
  images: 'imageGenerate',
  audio: 'audio',
  files: 'files',
  batches: 'batches',
  fine_tuning: 'fineTuning',
  moderations: 'moderate',
  rerank: 'rerank',
  ocr: 'ocr',
  models: 'models',
  vector_stores: 'vectorStores',
  assistants: 'assistants',
  threads: 'assistants',
}

function isJsonObject(value: unknown): value is JsonBody {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Readable)
}

/** The body a row takes: JSON objects, streamed multipart uploads where the row allows them, or nothing. */
function checkBody(route: PassthroughRoute, body: unknown): void {
  if (route.body === 'none' || body === undefined || body === null) return
  if (body instanceof Readable) {
    if (route.body !== 'multipart') throw new GatewayError('unsupported_media_type', `Send the body of ${route.method} ${route.path} as application/json`)
    return
  }
  if (!isJsonObject(body)) throw invalidParameter('body', 'The request body must be a JSON object')
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

/** The same path below the provider's base URL, query untouched; a model in the path is the one the provider knows. */
function upstreamPath(route: PassthroughRoute, url: string, target: RouteTarget): string {
  const queryAt = url.indexOf('?')
  const query = queryAt === -1 ? '' : url.slice(queryAt)
  const path = route.modelParam === undefined ? url.slice(0, queryAt === -1 ? undefined : queryAt) : route.path.replace(`:${route.modelParam}`, encodeURIComponent(target.upstreamModel))
  return path.slice('/v1'.length) + query
}

/** A body's `@slug/model` becomes the model the provider knows; nothing else in it changes. */
function upstreamBody(body: JsonBody | null, target: RouteTarget): JsonBody | undefined {
  if (body === null) return undefined
  if (typeof body.model !== 'string' || body.model === target.upstreamModel) return body
  return { ...body, model: target.upstreamModel }
}

function passthroughRoute(route: PassthroughRoute): RouteSpec {
  const creates = route.method === 'POST' && route.body === 'json'
  const meter = relayMeterOf(route.path)
  return {
    operation: {
      name: `passthrough:${route.group}`,
      endpointType: ENDPOINT_TYPES[route.group] ?? 'proxy',
      format: 'openai',
      // Model text in a request Gatehouse can read: creating a response.
      textual: creates && route.group === 'responses',
      cacheable: false,
      ...(meter === null ? {} : { worstCase: meter.worstCase }),
    },
    model(exchange) {
      if (route.modelParam !== undefined) return exchange.params[route.modelParam]
      return typeof exchange.body?.model === 'string' ? exchange.body.model : undefined
    },
    validate(_body, exchange) {
      checkBody(route, exchange.rawBody)
      checkQueryEnums(route, exchange.url)
    },
    async attempt(exchange, target, body, signal) {
      const routeTarget = target.route
      const { adapter } = routeTarget.provider
      const operation = adapterOperation(adapter, route.operation)
      if (operation) {
        if (!isJsonObject(body) || typeof body.model !== 'string') throw new GatewayError('missing_parameter', `'model' is required for ${route.group}`, { param: 'model' })
        const outcome = await attemptJson(operation, routeTarget, body as JsonBody & { model: string }, { signal })
        return { kind: 'json', status: 200, body: outcome.response, usage: outcome.usage }
      }
      if (!adapter.passthrough) {
        throw new GatewayError('unsupported_operation', `Provider '@${routeTarget.provider.record.slug}' (${adapter.kind}) does not serve ${route.group} (${route.method} ${route.path})`)
      }
      const upload = route.body === 'multipart' ? exchange.upload : null
      if (upload instanceof Readable && upload.readableDidRead) {
        // A streamed upload can be sent once: a second target would get an empty body.
        throw new GatewayError('upstream_error', `The upload to ${route.group} could not be sent again after the first attempt failed`)
      }
      // Audio and images answers are metered on their way (usage, seconds heard, characters spoken, images made).
      const metering = meter === null ? null : new RelayMetering(exchange, meter)
      const uploaded = upload === null ? null : upload instanceof Readable ? upload : Readable.from(upload)
      const upstream = await forwardToProvider(
        routeTarget,
        {
          method: route.method,
          path: upstreamPath(route, exchange.url, routeTarget),
          headers: exchange.headers,
          body: uploaded !== null ? (metering?.upload(uploaded) ?? uploaded) : upstreamBody(route.body === 'none' ? null : body, routeTarget),
        },
        signal,
      )
      const contentType = upstream.headers['content-type'] ?? ''
      const eventStream = route.response === 'sse' && contentType.startsWith('text/event-stream')
      const answer = metering === null ? upstream.body : metering.answer(upstream.body, upstream.status, contentType)
      return { kind: 'relay', status: upstream.status, headers: relayedResponseHeaders(upstream.headers, !eventStream), body: answer, eventStream }
    },
  }
}

export function registerPassthroughRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  app.register(async (scope) => {
    // Hands the request stream itself to the handler: uploads are never held in memory whole, and
    // no body limit applies beyond the provider's own.
    scope.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload))
    for (const route of passthroughRoutes) {
      scope.route({ method: route.method, url: route.path, handler: pipelineHandler(passthroughRoute(route), deps, OPENAI_FORMAT) })
    }
  })
}
