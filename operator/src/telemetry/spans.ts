/**
 * Control-plane spans, so "why did my change take 3 s" has an answer in the trace:
 *
 *  - a SERVER span per admin API (and snapshot sync) request, `{method} {route}`, continuing the
 *    caller's W3C trace;
 *  - an INTERNAL span per reconcile (`reconcile {Kind}`) in the operator;
 *  - a `snapshot.publish` span per compiled generation, linked to the request or reconcile that
 *    asked for it (when one was active), with the time it waited before compiling;
 *  - a `snapshot.ack` span per gateway ACK or NACK, linked to that generation's publish span, with
 *    how long after publication (and after the change was asked for) the gateway applied it.
 *
 * Nothing here runs unless the process started tracing: the command that started it calls
 * `enableControlPlaneTracing()` (cli/main.ts), before any app is built; the hooks are not even
 * installed otherwise.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type Span, type SpanContext } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'

export const CONTROL_PLANE_TRACER = 'gatehouse-control-plane'

let enabled = false

function tracingEnabled(): boolean {
  return enabled
}

/** Called once the OpenTelemetry SDK is registered in this process (the gateway package's startTracing). */
export function enableControlPlaneTracing(): void {
  enabled = true
}

function tracer() {
  return trace.getTracer(CONTROL_PLANE_TRACER)
}

const requestSpans = new WeakMap<FastifyRequest, Span>()

/** One SERVER span per request of `app`; the handler runs with it as the active span. */
export function registerServerSpans(app: FastifyInstance): void {
  if (!tracingEnabled()) return
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    const route = request.routeOptions.url ?? 'unmatched'
    const span = tracer().startSpan(
      `${request.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0]! } },
      parent,
    )
    requestSpans.set(request, span)
    // Fastify runs the rest of the request's hooks and its handler from this callback.
    context.with(trace.setSpan(parent, span), done)
  })
  app.addHook('onResponse', (request, reply, done) => {
    const span = requestSpans.get(request)
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode)
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      span.end()
    }
    done()
  })
}

/** Runs one reconcile inside its span; the result's requeue (if any) and failures are recorded. */
export async function reconcileSpan<T>(kind: string, namespace: string, name: string, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run()
  const span = tracer().startSpan(`reconcile ${kind}`, { attributes: { 'k8s.namespace.name': namespace, 'gatehouse.resource.kind': kind, 'gatehouse.resource.name': name } })
  try {
    return await context.with(trace.setSpan(context.active(), span), run)
  } catch (error) {
    span.setAttribute('error.type', error instanceof Error ? error.name : 'error')
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
    throw error
  } finally {
    span.end()
  }
}

/** What a publish remembers for the ACKs of its generation. */
interface Published {
  readonly spanContext: SpanContext
  readonly publishedAtMs: number
  readonly requestedAtMs: number
}

/** Generations kept for linking ACKs: a gateway ACKs within seconds; older ones are dropped. */
const MAX_REMEMBERED_GENERATIONS = 64

/**
 * The publisher's side: `requested()` when a compile is asked for (captures the active span, the
 * admin request or reconcile that changed something), then `published()` once per generation.
 */
export class SnapshotTracing {
  readonly #published = new Map<number, Published>()
  #requests: { links: Link[]; firstAtMs: number | null } = { links: [], firstAtMs: null }

  requested(nowMs: number): void {
    if (!tracingEnabled()) return
    const active = trace.getActiveSpan()?.spanContext()
    if (active && this.#requests.links.length < 32) this.#requests.links.push({ context: active })
    this.#requests.firstAtMs ??= nowMs
  }

  /** Wraps one compile-and-publish; the generation is read from what `run` resolves to. */
  async publish(nowMs: () => number, run: () => Promise<{ generation: number } | null>): Promise<void> {
    if (!tracingEnabled()) {
      await run()
      return
    }
    const { links, firstAtMs } = this.#requests
    this.#requests = { links: [], firstAtMs: null }
    const startedAtMs = nowMs()
    const span = tracer().startSpan('snapshot.publish', { links, attributes: { 'gatehouse.snapshot.wait_ms': firstAtMs === null ? 0 : Math.max(0, startedAtMs - firstAtMs) } }, ROOT_CONTEXT)
    try {
      const snapshot = await context.with(trace.setSpan(ROOT_CONTEXT, span), run)
      if (snapshot) {
        span.setAttribute('gatehouse.snapshot.generation', snapshot.generation)
        this.#remember(snapshot.generation, { spanContext: span.spanContext(), publishedAtMs: nowMs(), requestedAtMs: firstAtMs ?? startedAtMs })
      }
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
      throw error
    } finally {
      span.end()
    }
  }

  /** A gateway applied (`ack`) or refused (`nack`) a generation: a span linked to its publication. */
  acknowledged(gatewayId: string, generation: number, status: 'ack' | 'nack', nowMs: number): void {
    if (!tracingEnabled()) return
    const published = this.#published.get(generation)
    const attributes: Record<string, string | number> = { 'gatehouse.gateway.id': gatewayId, 'gatehouse.snapshot.generation': generation, 'gatehouse.snapshot.status': status }
    if (published) {
      attributes['gatehouse.snapshot.propagation_ms'] = Math.max(0, nowMs - published.publishedAtMs)
      attributes['gatehouse.snapshot.change_to_ack_ms'] = Math.max(0, nowMs - published.requestedAtMs)
    }
    const span = tracer().startSpan('snapshot.ack', { links: published ? [{ context: published.spanContext }] : [], attributes })
    if (status === 'nack') span.setStatus({ code: SpanStatusCode.ERROR, message: 'the gateway rejected the snapshot' })
    span.end()
  }

  #remember(generation: number, published: Published): void {
    this.#published.set(generation, published)
    if (this.#published.size > MAX_REMEMBERED_GENERATIONS) this.#published.delete(this.#published.keys().next().value!)
  }
}

/** One per process: every publisher (the organisation's and each deployment's) and the ACK route share it. */
export const snapshotTracing = new SnapshotTracing()
