/**
 * A real OTLP/HTTP trace receiver on loopback: accepts `POST /v1/traces` as the OpenTelemetry
 * exporters send it (http/json), answers 200 with an empty ExportTraceServiceResponse, and keeps
 * every span, decoded, for assertions.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, unknown>
  events: Array<{ name: string; attributes: Record<string, unknown> }>
  links: Array<{ traceId: string; spanId: string }>
  status: { code?: number; message?: string }
  scope: string
  resource: Record<string, unknown>
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const

interface OtlpValue {
  stringValue?: string
  intValue?: number | string
  doubleValue?: number
  boolValue?: boolean
  arrayValue?: { values?: OtlpValue[] }
}

interface OtlpKeyValue {
  key: string
  value: OtlpValue
}

function value(input: OtlpValue): unknown {
  if (input.stringValue !== undefined) return input.stringValue
  if (input.intValue !== undefined) return Number(input.intValue)
  if (input.doubleValue !== undefined) return input.doubleValue
  if (input.boolValue !== undefined) return input.boolValue
  if (input.arrayValue !== undefined) return (input.arrayValue.values ?? []).map(value)
  return null
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((item) => [item.key, value(item.value)]))
}

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: OtlpKeyValue[]
  events?: Array<{ name: string; attributes?: OtlpKeyValue[] }>
  links?: Array<{ traceId: string; spanId: string }>
  status?: { code?: number; message?: string }
}

interface OtlpRequest {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }> }>
}

/** Flattens an ExportTraceServiceRequest (JSON mapping: hex ids, enum numbers) into spans. */
export function spansOf(request: OtlpRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes)
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributes(event.attributes) })),
          links: span.links ?? [],
          status: span.status ?? {},
          scope: scopeSpans.scope?.name ?? '',
          resource,
        })
      }
    }
  }
  return out
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  readonly url: string
  readonly spans: ReceivedSpan[]
  /** Every request body as received (to check no secret was exported). */
  readonly bodies: string[]
  readonly contentTypes: string[]
  /** Spans in each export request, in the order received. */
  readonly batchSizes: number[]
  /** Waits until `predicate` holds over the spans received so far (bounded generously). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>
  close(): Promise<void>
}

export async function startOtlpReceiver(options: { decode?: (body: Buffer, contentType: string) => ReceivedSpan[] } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const bodies: string[] = []
  const contentTypes: string[] = []
  const batchSizes: number[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks)
      const contentType = request.headers['content-type'] ?? ''
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end()
        return
      }
      contentTypes.push(contentType)
      bodies.push(body.toString('utf8'))
      try {
        const received = contentType.startsWith('application/json') ? spansOf(JSON.parse(body.toString('utf8')) as OtlpRequest) : (options.decode?.(body, contentType) ?? [])
        batchSizes.push(received.length)
        spans.push(...received)
      } catch (error) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error))
        return
      }
      if (contentType.startsWith('application/json')) response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    contentTypes,
    batchSizes,
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`spans not received in ${timeoutMs} ms; have: ${spans.map((span) => `${span.name}(${span.kind})`).join(', ')}`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      return spans
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
