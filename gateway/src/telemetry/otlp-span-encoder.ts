/**
 * OTLP protobuf encoding of finished spans, written the moment a span ends (encoded-span-processor.ts)
 * so that a span waiting for its batch is a few hundred bytes in a reused buffer instead of a live
 * SDK span object (attributes, events, links, hrtime arrays) that survives young collections and is
 * promoted. Strings are written with Buffer's native UTF-8 writer, except attribute names, which
 * come from a small set and are copied as encoded the first time, and attributes whose value
 * repeats from span to span, copied whole (name and value) as encoded; ids are decoded from hex and
 * times written byte by byte here (Buffer's hex writer and writeUInt32LE cost more in argument
 * handling than in work). A batch is wrapped (resource, scope) once when it is sent: no second
 * pass that estimates sizes.
 *
 * Messages (opentelemetry-proto, trace/v1 and common/v1):
 *   ExportTraceServiceRequest { 1 resource_spans }
 *   ResourceSpans { 1 resource, 2 scope_spans, 3 schema_url }      Resource { 1 attributes, 2 dropped_attributes_count }
 *   ScopeSpans { 1 scope, 2 spans, 3 schema_url }                  InstrumentationScope { 1 name, 2 version, 3 attributes, 4 dropped }
 *   Span { 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 7 start, 8 end, 9 attributes,
 *          10 dropped_attributes_count, 11 events, 12 dropped_events_count, 13 links, 14 dropped_links_count,
 *          15 status, 16 flags }
 *   Event { 1 time, 2 name, 3 attributes, 4 dropped }   Link { 1 trace_id, 2 span_id, 3 trace_state, 4 attributes, 5 dropped, 6 flags }
 *   Status { 2 message, 3 code }   KeyValue { 1 key, 2 value }   AnyValue { 1 string, 2 bool, 3 int, 4 double, 5 array, 6 kvlist, 7 bytes }
 */
import type { Attributes, AttributeValue, HrTime, SpanContext } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { LeanSpan } from './lean-span.ts'

const VARINT = 0
const FIXED64 = 1
const LENGTH_DELIMITED = 2
const FIXED32 = 5

/** Span.flags: bit 8 says whether the parent's remoteness is known, bit 9 that it is remote. */
const FLAGS_HAS_IS_REMOTE = 0x100
const FLAGS_IS_REMOTE = 0x200

/** A growing byte buffer with the few protobuf writes OTLP needs; `reset` keeps its memory for the next batch. */
export class ProtoBuffer {
  bytes: Buffer
  pos = 0

  constructor(initialBytes = 16384) {
    this.bytes = Buffer.allocUnsafe(initialBytes)
  }

  reset(): void {
    this.pos = 0
  }

  /** The written bytes (a view: valid until the buffer is reset or grows). */
  written(): Buffer {
    return this.bytes.subarray(0, this.pos)
  }

  ensure(extraBytes: number): void {
    const needed = this.pos + extraBytes
    if (needed <= this.bytes.length) return
    let size = this.bytes.length * 2
    while (size < needed) size *= 2
    const grown = Buffer.allocUnsafe(size)
    this.bytes.copy(grown, 0, 0, this.pos)
    this.bytes = grown
  }

  varint(value: number): void {
    this.ensure(10)
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0
      while (v > 0x7f) {
        this.bytes[this.pos++] = (v & 0x7f) | 0x80
        v >>>= 7
      }
      this.bytes[this.pos++] = v
      return
    }
    // 64-bit (and negative, as two's complement) through BigInt: rare for span attributes.
    let v = BigInt.asUintN(64, BigInt(value))
    while (v > 0x7fn) {
      this.bytes[this.pos++] = Number(v & 0x7fn) | 0x80
      v >>= 7n
    }
    this.bytes[this.pos++] = Number(v)
  }

  tag(field: number, wireType: number): void {
    const key = (field << 3) | wireType
    // Every field number below 16 makes a one-byte key.
    if (key < 0x80) {
      this.ensure(1)
      this.bytes[this.pos++] = key
    } else this.varint(key)
  }

  /** Reserves one byte for a length; `endLength` writes it, moving the content when the length needs more. */
  beginLength(): number {
    this.ensure(1)
    return this.pos++
  }

  endLength(at: number): void {
    const length = this.pos - at - 1
    if (length < 0x80) {
      this.bytes[at] = length
      return
    }
    let size = 1
    for (let v = length; v > 0x7f; v >>>= 7) size++
    this.ensure(size - 1)
    this.bytes.copyWithin(at + size, at + 1, this.pos)
    this.pos += size - 1
    let v = length
    let i = at
    while (v > 0x7f) {
      this.bytes[i++] = (v & 0x7f) | 0x80
      v >>>= 7
    }
    this.bytes[i] = v
  }

  string(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED)
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (value.length * 3 < 0x80) {
      this.ensure(1 + value.length * 3)
      const written = this.bytes.write(value, this.pos + 1, 'utf8')
      this.bytes[this.pos] = written
      this.pos += 1 + written
      return
    }
    const length = Buffer.byteLength(value, 'utf8')
    this.varint(length)
    this.ensure(length)
    this.pos += this.bytes.write(value, this.pos, length, 'utf8')
  }

  rawBytes(field: number, value: Uint8Array): void {
    this.tag(field, LENGTH_DELIMITED)
    this.varint(value.length)
    this.ensure(value.length)
    this.bytes.set(value, this.pos)
    this.pos += value.length
  }

  /** A hex id (trace or span id) as its bytes. */
  hexId(field: number, hex: string): void {
    const length = hex.length >>> 1
    this.tag(field, LENGTH_DELIMITED)
    this.ensure(1 + length)
    const bytes = this.bytes
    const start = this.pos + 1
    for (let index = 0; index < length; index++) {
      const high = HEX_VALUES[hex.charCodeAt(2 * index)] ?? NOT_HEX
      const low = HEX_VALUES[hex.charCodeAt(2 * index + 1)] ?? NOT_HEX
      if ((high | low) > 0xf) {
        // Not hex (the API's ids always are): Buffer's own hex writer takes it.
        this.bytes[this.pos++] = length
        this.pos += this.bytes.write(hex, this.pos, length, 'hex')
        return
      }
      bytes[start + index] = (high << 4) | low
    }
    bytes[this.pos] = length
    this.pos = start + length
  }

  fixed32(field: number, value: number): void {
    this.tag(field, FIXED32)
    this.ensure(4)
    this.bytes.writeUInt32LE(value >>> 0, this.pos)
    this.pos += 4
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64)
    this.ensure(8)
    this.bytes.writeDoubleLE(value, this.pos)
    this.pos += 8
  }

  /** The seconds `time` wrote last, as nanoseconds in two 32-bit halves: the spans of a batch start and end within a few seconds. */
  #seconds = -1
  #secondsLow = 0
  #secondsHigh = 0

  /** An HrTime ([seconds, nanoseconds]) as fixed64 nanoseconds since the epoch. */
  time(field: number, time: HrTime): void {
    this.tag(field, FIXED64)
    const seconds = time[0]
    if (seconds !== this.#seconds) {
      // seconds × 10⁹ passes 2⁵³: split the seconds at 16 bits so every product and sum stays exact (no BigInt per time).
      const lowSecondsNs = (seconds & 0xffff) * 1e9
      const highSecondsNs = Math.floor(seconds / 0x10000) * 1e9
      const low = (lowSecondsNs % 0x100000000) + (highSecondsNs % 0x10000) * 0x10000
      this.#seconds = seconds
      this.#secondsLow = low % 0x100000000
      this.#secondsHigh = Math.floor(lowSecondsNs / 0x100000000) + Math.floor(highSecondsNs / 0x10000) + Math.floor(low / 0x100000000)
    }
    // Nanoseconds are below 2³⁰: at most one carry into the high half.
    const low = this.#secondsLow + time[1]
    if (low >= 0x100000000) this.#fixed64(low - 0x100000000, (this.#secondsHigh + 1) >>> 0)
    else this.#fixed64(low, this.#secondsHigh >>> 0)
  }

  /** Eight bytes, little-endian, from two unsigned 32-bit halves (Buffer's writeUInt32LE checks its arguments first). */
  #fixed64(low: number, high: number): void {
    this.ensure(8)
    const bytes = this.bytes
    const at = this.pos
    bytes[at] = low
    bytes[at + 1] = low >>> 8
    bytes[at + 2] = low >>> 16
    bytes[at + 3] = low >>> 24
    bytes[at + 4] = high
    bytes[at + 5] = high >>> 8
    bytes[at + 6] = high >>> 16
    bytes[at + 7] = high >>> 24
    this.pos = at + 8
  }

  /** Copies bytes written elsewhere: a batch's encoded spans, an attribute name's field (whole: no view made). */
  append(bytes: Uint8Array, start = 0, end = bytes.length): void {
    this.ensure(end - start)
    this.bytes.set(start === 0 && end === bytes.length ? bytes : byteRange(bytes, start, end), this.pos)
    this.pos += end - start
  }

}

/** A view of `bytes` from `start` to `end`, made as a plain Uint8Array: Buffer's `subarray` cost twice as much. */
function byteRange(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start)
}

/**
 * A hex digit's value by its character code, NOT_HEX for any other code below 128 (above, the read
 * is undefined): one load a digit, where tests of the three ranges branched on every random digit.
 */
const NOT_HEX = 0xff
const HEX_VALUES = new Uint8Array(128).fill(NOT_HEX)
for (let digit = 0; digit < 16; digit++) {
  HEX_VALUES[digit.toString(16).charCodeAt(0)] = digit
  HEX_VALUES[digit.toString(16).toUpperCase().charCodeAt(0)] = digit
}

function anyValue(out: ProtoBuffer, value: AttributeValue | Attributes | Uint8Array | null | undefined): void {
  switch (typeof value) {
    case 'string':
      out.string(1, value)
      return
    case 'boolean':
      out.tag(2, VARINT)
      out.varint(value ? 1 : 0)
      return
    case 'number':
      if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
        out.tag(3, VARINT)
        out.varint(value)
      } else out.double(4, value)
      return
  }
  if (value instanceof Uint8Array) out.rawBytes(7, value)
  else if (Array.isArray(value)) {
    out.tag(5, LENGTH_DELIMITED)
    const array = out.beginLength()
    for (const item of value as unknown[]) {
      out.tag(1, LENGTH_DELIMITED)
      const at = out.beginLength()
      anyValue(out, item as AttributeValue)
      out.endLength(at)
    }
    out.endLength(array)
  } else if (typeof value === 'object' && value !== null) {
    out.tag(6, LENGTH_DELIMITED)
    const list = out.beginLength()
    keyValues(out, 1, value as Attributes)
    out.endLength(list)
  }
}

/**
 * What the encoder keeps of each attribute name it met, in one bounded map (a caller's span
 * attributes could bring any names: past the bound it starts over):
 *  - the name as its encoded KeyValue.key field (tag, length, UTF-8), written once: a copy of
 *    20-odd bytes took 28 ns where Buffer's UTF-8 writer took 48 (a loop over the characters: 59);
 *  - the last value, when a short primitive, and once that value came three times in a row the
 *    whole KeyValue as encoded (key and value fields). Most attributes repeat from span to span
 *    (operation, route, provider, workspace, model, status), and the copy of one encoded pair
 *    replaces the name's copy, two length-delimited fields and the value's encoding; a value that
 *    changes every span (an id, a token count) costs a comparison and keeps no bytes. Timed in a
 *    loop of spans shaped as the gateway's server span (19 attributes, 3 of them changing):
 *    4.8-5.0 µs a span at the median against 6.3-6.6 before, 2026-11-29.
 *    Three, not two: a request's response id and token counts are on its attempt span and on its
 *    server span, one after the other, and then change; remembered after two, each was copied
 *    into a new Buffer every request only to be dropped by the next.
 */
interface EncodedKey {
  readonly name: Buffer
  value: AttributeValue | undefined
  /** How many spans in a row carried `value`. */
  repeats: number
  /** The KeyValue's content, once `value` came REPEATS_REMEMBERED times in a row; null until then. */
  pair: Buffer | null
  /** While a lean span is encoded: the span (its stamp), and the name's first and last writes in it. */
  stamp: number
  first: number
  lastWrite: number
}
const REPEATS_REMEMBERED = 3
const encodedKeys = new Map<string, EncodedKey>()
const MAX_ENCODED_KEYS = 1024
const scratch = new ProtoBuffer(256)

function encodedKey(name: string): EncodedKey {
  let known = encodedKeys.get(name)
  if (known === undefined) {
    scratch.reset()
    scratch.string(1, name)
    known = { name: Buffer.from(scratch.written()), value: undefined, repeats: 0, pair: null, stamp: 0, first: 0, lastWrite: 0 }
    if (encodedKeys.size >= MAX_ENCODED_KEYS) encodedKeys.clear()
    encodedKeys.set(name, known)
  }
  return known
}

/**
 * Longest string value whose pair is remembered: names, ids and models are short, while opted-in
 * message content (span events) can be long and is seldom sent twice; holding it would only keep it.
 */
const MAX_REMEMBERED_CHARS = 256

/** A value whose encoded pair may be remembered: a number, a boolean, or a short string. */
function rememberable(value: unknown): value is string | number | boolean {
  return typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= MAX_REMEMBERED_CHARS)
}

/** Remembers the pair just written (its last `length` bytes in `out`) for the next span with the same value. */
function rememberPair(out: ProtoBuffer, known: EncodedKey, value: unknown, length: number): void {
  if (!rememberable(value)) {
    known.value = undefined
    known.repeats = 0
    known.pair = null
  } else if (known.value === value) {
    if (++known.repeats >= REPEATS_REMEMBERED) known.pair = Buffer.from(out.bytes.subarray(out.pos - length, out.pos))
  } else {
    known.value = value
    known.repeats = 1
    known.pair = null
  }
}

/** One attribute as a KeyValue in repeated field `field`: a remembered pair copied whole when its value repeats. */
function keyValue(out: ProtoBuffer, field: number, known: EncodedKey, item: AttributeValue | Attributes | undefined): void {
  out.tag(field, LENGTH_DELIMITED)
  if (known.pair !== null && known.value === item) {
    out.varint(known.pair.length)
    out.append(known.pair)
    return
  }
  const pair = out.beginLength()
  out.append(known.name)
  out.tag(2, LENGTH_DELIMITED)
  const value = out.beginLength()
  anyValue(out, item)
  out.endLength(value)
  const length = out.pos - pair - 1
  out.endLength(pair)
  rememberPair(out, known, item, length)
}

/**
 * Each attribute as a KeyValue in repeated field `field`. By Object.keys, not for-in: a span with
 * more than about 18 attributes holds them in dictionary mode (the SDK adds them by keyed stores),
 * where for-in checks every key again, and Object.keys yields own keys only.
 */
function keyValues(out: ProtoBuffer, field: number, attributes: Attributes): void {
  const keys = Object.keys(attributes)
  for (let index = 0; index < keys.length; index++) keyValue(out, field, encodedKey(keys[index]!), attributes[keys[index]!])
}

/** Stamps the lean span being encoded (EncodedKey.stamp): names seen in it carry its number. */
let leanSpanStamp = 0
/** Each write's encoded name, for the second pass over a lean span's attributes (reused). */
const writtenKeys: EncodedKey[] = []

/** A shape's value that matches no value: one that was not remembered (see `rememberable`). */
const UNMATCHED: unique symbol = Symbol('unmatched')

/**
 * How a lean span's attributes were last encoded, for the next span written the same way (the
 * same names in the same order): the gateway's spans are, on every request, and carry most of
 * their values again too (operation, route, provider, workspace, model, status). Such a span's
 * KeyValues are copied from here a run at a time, and only the values that differ are encoded.
 */
interface SpanShape {
  /** The span's attribute writes, by name, in order: a span with the same list has the same KeyValues. */
  readonly names: readonly string[]
  /** Per KeyValue, in order: the write that gives its value (a name's last) and the name's entry. */
  readonly valueWrites: readonly number[]
  readonly keys: readonly EncodedKey[]
  /** Per KeyValue: the value encoded last (`UNMATCHED` when not remembered). */
  readonly values: Array<AttributeValue | typeof UNMATCHED>
  /** The KeyValues as encoded last, tags included, and where each starts (one more entry: the end). */
  bytes: Buffer
  readonly offsets: number[]
}

/**
 * Shapes by their first attribute name (a constant, its hash already known, where the span's name
 * is built per request), the newest first: spans of several kinds and names start alike.
 */
const spanShapes = new Map<string, SpanShape[]>()
const SHAPES_PER_NAME = 8
/** Names come from callers too (a caller's span attributes): past this many, the map starts over. */
const MAX_SHAPED_NAMES = 256

function sameNames(names: readonly string[], shape: SpanShape): boolean {
  const known = shape.names
  if (known.length !== names.length) return false
  for (let index = 0; index < names.length; index++) if (names[index] !== known[index]) return false
  return true
}

/** Whether an attribute value is the one a shape encoded: the same primitive, or an array of the same primitives. */
function sameValue(value: AttributeValue | undefined, known: AttributeValue | typeof UNMATCHED | undefined): boolean {
  if (value === known) return true
  if (!Array.isArray(value) || !Array.isArray(known) || value.length !== known.length) return false
  for (let index = 0; index < value.length; index++) if (value[index] !== known[index]) return false
  return true
}

function shapeValue(value: AttributeValue | undefined): AttributeValue | typeof UNMATCHED {
  if (rememberable(value)) return value
  // Arrays are copied when set (lean-span.ts), so the span's own one stays as it was encoded.
  return Array.isArray(value) && value.length <= 16 && value.every(rememberable) ? value : UNMATCHED
}

/**
 * A lean span's attributes (lean-span.ts), read from its arrays of writes: each name once, where
 * it was first written, with the value written last (as the SDK's span object holds them). When a
 * span was written the same way before, from its shape (`SpanShape`); otherwise
 * by two passes, the first finding first writes and last values through the names' entries,
 * looked up for their encoding anyway. Either way the shape is what this span encoded.
 */
function spanKeyValues(out: ProtoBuffer, field: number, span: LeanSpan): void {
  const names = span.attributeNames
  if (names.length === 0) return
  let shapes = spanShapes.get(names[0]!)
  if (shapes !== undefined) {
    for (let index = 0; index < shapes.length; index++) {
      const shape = shapes[index]!
      if (!sameNames(names, shape)) continue
      encodeFromShape(out, field, span.attributeValues, shape)
      return
    }
  }
  const shape = encodeAndShape(out, field, span)
  if (shapes === undefined) {
    if (spanShapes.size >= MAX_SHAPED_NAMES) spanShapes.clear()
    shapes = []
    spanShapes.set(names[0]!, shapes)
  }
  shapes.unshift(shape)
  if (shapes.length > SHAPES_PER_NAME) shapes.pop()
}

function encodeAndShape(out: ProtoBuffer, field: number, span: LeanSpan): SpanShape {
  const names = span.attributeNames
  const values = span.attributeValues
  const stamp = ++leanSpanStamp
  for (let index = 0; index < names.length; index++) {
    const known = encodedKey(names[index]!)
    if (known.stamp !== stamp) {
      known.stamp = stamp
      known.first = index
    }
    known.lastWrite = index
    writtenKeys[index] = known
  }
  const shape: SpanShape = { names: names.slice(), valueWrites: [], keys: [], values: [], bytes: EMPTY_BYTES, offsets: [] }
  const start = out.pos
  for (let index = 0; index < names.length; index++) {
    const known = writtenKeys[index]!
    if (known.first !== index) continue
    const value = values[known.lastWrite]
    ;(shape.valueWrites as number[]).push(known.lastWrite)
    ;(shape.keys as EncodedKey[]).push(known)
    shape.values.push(shapeValue(value))
    shape.offsets.push(out.pos - start)
    keyValue(out, field, known, value)
  }
  shape.offsets.push(out.pos - start)
  keepBytes(shape, out, start)
  return shape
}

const EMPTY_BYTES = Buffer.alloc(0)

/**
 * Copies a shape's unchanged KeyValues a run at a time and encodes the others, moving the shape on
 * to this span's values and bytes. `offsets` is rewritten in place: each entry is read before it is
 * written, and a run's start is kept in `runFrom`.
 */
function encodeFromShape(out: ProtoBuffer, field: number, values: readonly AttributeValue[], shape: SpanShape): void {
  const start = out.pos
  const { valueWrites, keys, offsets } = shape
  const bytes = shape.bytes
  const count = keys.length
  let runFrom = -1
  for (let index = 0; index < count; index++) {
    const value = values[valueWrites[index]!]
    const offset = offsets[index]!
    if (sameValue(value, shape.values[index])) {
      if (runFrom === -1) runFrom = offset
      offsets[index] = out.pos - start + offset - runFrom
      continue
    }
    if (runFrom !== -1) {
      out.append(bytes, runFrom, offset)
      runFrom = -1
    }
    offsets[index] = out.pos - start
    keyValue(out, field, keys[index]!, value)
    shape.values[index] = shapeValue(value)
  }
  const end = offsets[count]!
  if (runFrom !== -1) out.append(bytes, runFrom, end)
  offsets[count] = out.pos - start
  keepBytes(shape, out, start)
}

/** The shape's copy of what was just written from `start` (its buffer reused when large enough). */
function keepBytes(shape: SpanShape, out: ProtoBuffer, start: number): void {
  const length = out.pos - start
  if (shape.bytes.length < length) shape.bytes = Buffer.allocUnsafe(Math.max(length, 2 * shape.bytes.length))
  shape.bytes.set(byteRange(out.bytes, start, out.pos))
}

function count(out: ProtoBuffer, field: number, value: number): void {
  out.tag(field, VARINT)
  out.varint(value)
}

function flags(context: SpanContext, remote: boolean | undefined): number {
  return (context.traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (remote === true ? FLAGS_IS_REMOTE : 0)
}

/** Appends `span` as ScopeSpans.spans (field 2): a span's bytes, ready to follow its scope. */
export function encodeSpan(out: ProtoBuffer, span: ReadableSpan): void {
  out.tag(2, LENGTH_DELIMITED)
  const message = out.beginLength()
  const context = span.spanContext()
  out.hexId(1, context.traceId)
  out.hexId(2, context.spanId)
  const traceState = context.traceState?.serialize()
  if (traceState) out.string(3, traceState)
  const parent = span.parentSpanContext
  if (parent?.spanId) out.hexId(4, parent.spanId)
  out.string(5, span.name)
  // The API's kinds start at INTERNAL = 0; OTLP's at SPAN_KIND_UNSPECIFIED = 0.
  count(out, 6, span.kind + 1)
  out.time(7, span.startTime)
  out.time(8, span.endTime)
  if (span instanceof LeanSpan) spanKeyValues(out, 9, span)
  else keyValues(out, 9, span.attributes)
  count(out, 10, span.droppedAttributesCount)
  for (const event of span.events) {
    out.tag(11, LENGTH_DELIMITED)
    const at = out.beginLength()
    out.time(1, event.time)
    out.string(2, event.name)
    if (event.attributes) keyValues(out, 3, event.attributes)
    count(out, 4, event.droppedAttributesCount ?? 0)
    out.endLength(at)
  }
  count(out, 12, span.droppedEventsCount)
  for (const link of span.links) {
    out.tag(13, LENGTH_DELIMITED)
    const at = out.beginLength()
    out.hexId(1, link.context.traceId)
    out.hexId(2, link.context.spanId)
    const linkState = link.context.traceState?.serialize()
    if (linkState) out.string(3, linkState)
    if (link.attributes) keyValues(out, 4, link.attributes)
    count(out, 5, link.droppedAttributesCount ?? 0)
    out.fixed32(6, flags(link.context, link.context.isRemote))
    out.endLength(at)
  }
  count(out, 14, span.droppedLinksCount)
  out.tag(15, LENGTH_DELIMITED)
  const status = out.beginLength()
  if (span.status.message) out.string(2, span.status.message)
  count(out, 3, span.status.code)
  out.endLength(status)
  out.fixed32(16, flags(context, parent?.isRemote))
  out.endLength(message)
}

export interface EncodedScope {
  readonly name: string
  readonly version?: string
  readonly schemaUrl?: string
}

/** What a resource contributes to a request: its attributes (settled: the SDK waits for async detectors before exporting). */
export interface EncodedResource {
  readonly attributes: Attributes
  readonly schemaUrl?: string
}

/** The spans of one scope, as `encodeSpan` wrote them into `bytes` between `start` and `end`. */
export interface ScopeSpanBytes {
  readonly scope: EncodedScope
  readonly bytes: Uint8Array
  readonly start: number
  readonly end: number
}

/** Writes a whole ExportTraceServiceRequest (one resource, its scopes and their encoded spans) into `out`. */
export function encodeRequest(out: ProtoBuffer, resource: EncodedResource, scopes: readonly ScopeSpanBytes[]): void {
  out.tag(1, LENGTH_DELIMITED)
  const resourceSpans = out.beginLength()
  out.tag(1, LENGTH_DELIMITED)
  const resourceMessage = out.beginLength()
  keyValues(out, 1, resource.attributes)
  count(out, 2, 0)
  out.endLength(resourceMessage)
  for (const { scope, bytes, start, end } of scopes) {
    out.tag(2, LENGTH_DELIMITED)
    const scopeSpans = out.beginLength()
    out.tag(1, LENGTH_DELIMITED)
    const scopeMessage = out.beginLength()
    out.string(1, scope.name)
    if (scope.version) out.string(2, scope.version)
    out.endLength(scopeMessage)
    out.append(bytes, start, end)
    if (scope.schemaUrl) out.string(3, scope.schemaUrl)
    out.endLength(scopeSpans)
  }
  if (resource.schemaUrl) out.string(3, resource.schemaUrl)
  out.endLength(resourceSpans)
}
