/**
 * The one way a data-plane route meets fastify: start an exchange for the request, run the route's
 * pipeline, and write the answer in the route's wire format. Route files declare a `RouteSpec`
 * and call `servePipelineRoute`; nothing else of theirs touches the request path.
 */
import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../core/errors.ts'
import { buildRoutePipeline, type PipelineDeps } from '../pipeline/build.ts'
import { refuseRepeatedCredentials } from '../pipeline/authenticate.ts'
import { ExchangeContext, type Trace } from '../pipeline/context.ts'
import { toJsonText } from '../core/raw-json.ts'
import type { RouteSpec } from '../pipeline/route-spec.ts'
import { newFacts, type Answer, type Exchange, type Pipeline, type Terminal } from '../pipeline/stage.ts'
import { transportError } from '../upstream/transport.ts'
import { pipeSse, relaySseBytes, responsesErrorData, startSse, type PipeSseOptions } from './sse-writer.ts'

declare module 'fastify' {
  interface FastifyRequest {
    gatewayTrace: Trace
  }
}

export function notReady(): GatewayError {
  return new GatewayError('not_ready', 'The gateway has not loaded its configuration yet', { headers: { 'retry-after': '1' } })
}

/** A new exchange on the current runtime (kept until it ends), aborted when the client goes away. */
export function startExchange(spec: RouteSpec, deps: PipelineDeps, pipeline: Pipeline, request: FastifyRequest, reply: FastifyReply): Exchange {
  const runtime = deps.holder.current
  if (!runtime) throw notReady()
  refuseRepeatedCredentials(request.raw.rawHeaders)
  const controller = new AbortController()
  const response = reply.raw
  response.once('close', () => {
    if (!response.writableFinished) controller.abort()
  })
  const rawBody: unknown = request.body
  const isObject = typeof rawBody === 'object' && rawBody !== null && !Array.isArray(rawBody) && !(rawBody instanceof Readable)
  return {
    operation: spec.operation,
    context: new ExchangeContext(request.gatewayTrace, runtime, controller.signal, deps.now()),
    headers: request.headers,
    url: request.url,
    params: (request.params ?? {}) as Record<string, string | undefined>,
    rawBody,
    body: isObject ? (rawBody as Record<string, unknown>) : null,
    upload: rawBody instanceof Readable ? rawBody : null,
    relayStreams: pipeline.relayStreams,
    route: null,
    facts: newFacts(),
    responseHeaders: {},
  }
}

/** How a route writes its answers: the SSE conventions of its wire format. */
export interface AnswerFormat {
  readonly sse: PipeSseOptions
}

export const OPENAI_FORMAT: AnswerFormat = { sse: {} }

async function writeAnswer(exchange: Exchange, answer: Answer, reply: FastifyReply, format: AnswerFormat): Promise<void> {
  const { facts, responseHeaders } = exchange
  facts.status = answer.status
  switch (answer.kind) {
    case 'json':
      facts.firstByteAtMs = Date.now()
      await reply.code(answer.status).headers(responseHeaders).type('application/json; charset=utf-8').send(toJsonText(answer.body))
      return
    case 'stream': {
      facts.streamed = true
      reply.hijack()
      startSse(reply.raw, answer.status, { 'x-gateway-trace-id': exchange.context.trace.traceId, ...responseHeaders })
      await pipeSse(reply.raw, answer.batches, format.sse, () => {
        facts.firstByteAtMs ??= Date.now()
      })
      return
    }
    case 'relay': {
      facts.firstByteAtMs = Date.now()
      if (answer.eventStream) {
        facts.streamed = true
        reply.hijack()
        startSse(reply.raw, answer.status, { ...answer.headers, 'x-gateway-trace-id': exchange.context.trace.traceId, ...responseHeaders })
        const errorData = exchange.operation.endpointType === 'responses' ? responsesErrorData : undefined
        await relaySseBytes(reply.raw, answer.body, (error) => transportError(error, exchange.context.signal), errorData)
        return
      }
      // JSON and binary answers are piped as they arrive; fastify ends the reply if the provider cuts it.
      const body = answer.body instanceof Readable ? answer.body : Readable.from(answer.body)
      await reply.code(answer.status).headers({ ...answer.headers, ...responseHeaders }).send(body)
      return
    }
    case 'session':
      throw new GatewayError('internal_error', 'A realtime session answer reached an HTTP route')
  }
}

/** Runs the pipeline for one request and writes its answer; errors carry the headers stages set. */
export async function serveExchange(pipeline: Terminal, exchange: Exchange, reply: FastifyReply, format: AnswerFormat): Promise<void> {
  let answer: Answer
  try {
    answer = await pipeline(exchange)
  } catch (error) {
    reply.headers(exchange.responseHeaders)
    throw error
  }
  await writeAnswer(exchange, answer, reply, format)
}

/** A fastify handler for a route: its pipeline is composed once, here. */
export function pipelineHandler(spec: RouteSpec, deps: PipelineDeps, format: AnswerFormat): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return pipelineHandlerOf(spec, buildRoutePipeline(spec, deps), deps, format)
}

/** A fastify handler running a pipeline already composed for `spec` (a branching one fronted by it, too). */
export function pipelineHandlerOf(spec: RouteSpec, pipeline: Pipeline, deps: PipelineDeps, format: AnswerFormat): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return (request, reply) => serveExchange(pipeline.run, startExchange(spec, deps, pipeline, request, reply), reply, format)
}
