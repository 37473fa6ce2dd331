/**
 * Decodes OTLP/HTTP protobuf trace exports (`application/x-protobuf`) into the receiver's spans,
 * with protobufjs (installed with the OTLP gRPC exporter, through @grpc/proto-loader; not a
 * dependency of its own) and the messages of opentelemetry-proto's trace_service.proto and
 * trace.proto written out below (field numbers as in opentelemetry-proto v1).
 */
import protobuf from 'protobufjs'
import { spansOf, type ReceivedSpan } from './otlp-receiver.ts'

const root = protobuf.Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
    ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 }, schemaUrl: { type: 'string', id: 3 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 }, droppedAttributesCount: { type: 'uint32', id: 2 } } },
    ScopeSpans: { fields: { scope: { type: 'InstrumentationScope', id: 1 }, spans: { rule: 'repeated', type: 'Span', id: 2 }, schemaUrl: { type: 'string', id: 3 } } },
    InstrumentationScope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 3 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        traceState: { type: 'string', id: 3 },
        parentSpanId: { type: 'bytes', id: 4 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        events: { rule: 'repeated', type: 'Event', id: 11 },
        links: { rule: 'repeated', type: 'Link', id: 13 },
        status: { type: 'Status', id: 15 },
        flags: { type: 'fixed32', id: 16 },
      },
    },
    Event: { fields: { timeUnixNano: { type: 'fixed64', id: 1 }, name: { type: 'string', id: 2 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 3 } } },
    Link: { fields: { traceId: { type: 'bytes', id: 1 }, spanId: { type: 'bytes', id: 2 }, traceState: { type: 'string', id: 3 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 4 } } },
    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        arrayValue: { type: 'ArrayValue', id: 5 },
        kvlistValue: { type: 'KeyValueList', id: 6 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
    KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
  },
})
const request = root.lookupType('ExportTraceServiceRequest')

/** Byte fields become the hex strings of the JSON mapping; the rest already has its shape. */
function hexIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIds)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    out[key] = item instanceof Uint8Array ? Buffer.from(item).toString('hex') : hexIds(item)
  }
  return out
}

export function decodeProtobufTraces(body: Buffer): ReceivedSpan[] {
  const decoded = request.toObject(request.decode(body), { longs: Number, enums: Number, defaults: false, oneofs: false })
  return spansOf(hexIds(decoded) as Parameters<typeof spansOf>[0])
}
