/**
 * The gateway's spans, made without the SDK's per-attribute machinery. The SDK's span copies every
 * attribute into an object by a keyed store after checking it three ways (own key? valid value?
 * over the limits?), and a span with twenty-odd attributes ends up with them in a dictionary, which
 * the exporter then walks by name. A request traced at 100 % sets about forty attributes on its two
 * spans; under callgrind the SDK's part of that (setAttribute(s), the megamorphic stores, the own-key
 * checks) was about 18,000 instructions a request, and reading them back for the encoder another
 * 5,000 (test/bench/instructions.ts --variant trace100, 20,000 requests of warm-up). With lean
 * spans the traced request path went from 449,800 instructions a request to 432,900 and 433,800.
 *
 * A `LeanSpan` keeps its attribute writes as two parallel arrays (names, values), in the order
 * made; a name set again is resolved when the span is read. It is a complete span for the API
 * (`Span`) and for every span processor and exporter (`ReadableSpan`: `attributes` is built from
 * the arrays when an exporter other than the gateway's OTLP encoder asks), and it keeps the SDK's
 * semantics: the span limits (OTEL_SPAN_*_LIMIT, OTEL_ATTRIBUTE_*_LIMIT), times (a start from the
 * wall clock, a duration from the monotonic one), status rules, events, links and exceptions.
 *
 * `LeanTracer` stands in for the SDK's tracer with the same sampler, id generator, resource, scope,
 * limits and span processor, read from that tracer: what its `startSpan` decides (parent, trace id,
 * sampling) is decided here the same way. It is made by `leanTracer`, which returns null when the
 * SDK's tracer does not have those fields (a release that renamed them): the SDK's own tracer is
 * then used, and the test beside this module fails.
 */
import {
  context as contextApi, diag, SamplingDecision, SpanKind, SpanStatusCode, trace, TraceFlags, INVALID_SPAN_CONTEXT,
  type Attributes, type AttributeValue, type Context, type Exception, type HrTime, type Link, type Span, type SpanAttributes,
  type SpanContext, type SpanOptions, type SpanStatus, type TimeInput, type Tracer,
} from '@opentelemetry/api'
import { addHrTimes, hrTime, hrTimeDuration, isAttributeValue, isTimeInput, isTimeInputHrTime, isTracingSuppressed, millisToHrTime, otperformance, sanitizeAttributes } from '@opentelemetry/core'
import type { IdGenerator, ReadableSpan, Sampler, SpanLimits, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base'

type Resource = ReadableSpan['resource']
type InstrumentationScope = ReadableSpan['instrumentationScope']

/** What a span needs of its tracer. */
interface SpanSettings {
  readonly resource: Resource
  readonly scope: InstrumentationScope
  readonly limits: Required<SpanLimits>
  readonly processor: SpanProcessor
}

const NO_ATTRIBUTES: Attributes = Object.freeze({})
/** A span started without links (most): one shared empty array, not one each (samplers and the span only read it). */
const NO_LINKS: Link[] = []
const EXCEPTION_EVENT = 'exception'

/**
 * A value as a span keeps it (the SDK's rules): strings cut to the limit, and arrays copied, their
 * strings cut too (the caller may change its own array later). A limit that is not positive is
 * ignored, as the SDK ignores it.
 */
function storedValue(value: AttributeValue, limit: number): AttributeValue {
  const cut = limit > 0 && limit !== Infinity
  if (Array.isArray(value)) return (cut ? value.map((item: unknown) => (typeof item === 'string' && item.length > limit ? item.slice(0, limit) : item)) : value.slice()) as AttributeValue
  return cut && typeof value === 'string' && value.length > limit ? value.slice(0, limit) : value
}

/** Attributes of an event or link within `limit` names, values truncated; and how many were dropped. */
function boundedAttributes(attributes: Attributes | undefined, limit: number, valueLimit: number): { attributes: Attributes; dropped: number } {
  const sanitized = sanitizeAttributes(attributes)
  const out: Attributes = {}
  let kept = 0
  let dropped = 0
  for (const name of Object.keys(sanitized)) {
    if (kept >= limit) {
      dropped++
      continue
    }
    out[name] = storedValue(sanitized[name]!, valueLimit)
    kept++
  }
  return { attributes: out, dropped }
}

export class LeanSpan implements Span, ReadableSpan {
  name: string
  readonly kind: SpanKind
  readonly parentSpanContext: SpanContext | undefined
  readonly startTime: HrTime
  endTime: HrTime = [0, 0]
  status: SpanStatus = { code: SpanStatusCode.UNSET }
  readonly links: Link[] = []
  readonly events: TimedEvent[] = []
  readonly resource: Resource
  readonly instrumentationScope: InstrumentationScope
  droppedAttributesCount = 0
  droppedEventsCount = 0
  droppedLinksCount = 0
  /**
   * Every attribute write, in order: a name set again appears again, and its last value is the
   * one that counts (`attributes`, and the encoder, which reads these arrays). Writes are appended
   * without a search for the name: a span's twenty-odd names searched on every write cost more
   * than the SDK's object did.
   */
  readonly attributeNames: string[] = []
  readonly attributeValues: AttributeValue[] = []
  readonly #spanContext: SpanContext
  readonly #settings: SpanSettings
  /** The monotonic clock at the start (ms), when the start time was not given: the duration comes from it. */
  readonly #startedAt: number | null
  #duration: HrTime = [-1, -1]
  #ended = false

  constructor(settings: SpanSettings, spanContext: SpanContext, name: string, kind: SpanKind, parentSpanContext: SpanContext | undefined, startTime: TimeInput | undefined, links: readonly Link[]) {
    this.#settings = settings
    this.#spanContext = spanContext
    this.name = name
    this.kind = kind
    this.parentSpanContext = parentSpanContext
    this.resource = settings.resource
    this.instrumentationScope = settings.scope
    if (startTime === undefined) {
      this.#startedAt = otperformance.now()
      this.startTime = millisToHrTime(Date.now())
    } else {
      this.#startedAt = null
      this.startTime = timeOf(startTime)
    }
    for (const link of links) this.addLink(link)
  }

  spanContext(): SpanContext {
    return this.#spanContext
  }

  setAttribute(key: string, value?: AttributeValue): this {
    if (value === null || value === undefined || this.#endedWarning()) return this
    if (key.length === 0) {
      diag.warn(`Invalid attribute key: ${key}`)
      return this
    }
    // Strings, numbers and booleans are what the gateway sets; arrays are checked to be homogeneous.
    const type = typeof value
    if (type !== 'string' && type !== 'number' && type !== 'boolean' && !isAttributeValue(value)) {
      diag.warn(`Invalid attribute value set for key: ${key}`)
      return this
    }
    const { attributeValueLengthLimit, attributeCountLimit } = this.#settings.limits
    // A name over the count limit is dropped unless it is set already; below the limit in writes
    // (always, for the gateway's spans) nothing is counted.
    if (this.attributeNames.length >= attributeCountLimit && !this.attributeNames.includes(key) && new Set(this.attributeNames).size >= attributeCountLimit) {
      this.droppedAttributesCount++
      return this
    }
    this.attributeNames.push(key)
    this.attributeValues.push(storedValue(value, attributeValueLengthLimit))
    return this
  }

  /**
   * Each field of `attributes`. Read by for-in without the SDK's own-field test (about 90
   * instructions a field): the gateway and the control plane pass object literals, which inherit
   * no enumerable fields.
   */
  setAttributes(attributes: SpanAttributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key])
    return this
  }

  /**
   * The attributes as one object, each name where it was first set with the value set last (as the
   * SDK's span keeps them): what exporters other than the gateway's encoder read.
   */
  get attributes(): Attributes {
    const out: Attributes = {}
    for (let index = 0; index < this.attributeNames.length; index++) out[this.attributeNames[index]!] = this.attributeValues[index]
    return out
  }

  addEvent(name: string, attributesOrStartTime?: SpanAttributes | TimeInput, startTime?: TimeInput): this {
    if (this.#endedWarning()) return this
    const { eventCountLimit, attributePerEventCountLimit, attributeValueLengthLimit } = this.#settings.limits
    if (eventCountLimit === 0) {
      diag.warn('No events allowed.')
      this.droppedEventsCount++
      return this
    }
    if (this.events.length >= eventCountLimit) {
      if (this.droppedEventsCount === 0) diag.debug('Dropping extra events.')
      this.events.shift()
      this.droppedEventsCount++
    }
    let time = startTime
    let attributes = attributesOrStartTime as Attributes | undefined
    if (isTimeInput(attributesOrStartTime)) {
      if (!isTimeInput(startTime)) time = attributesOrStartTime
      attributes = undefined
    }
    const bounded = boundedAttributes(attributes, attributePerEventCountLimit, attributeValueLengthLimit)
    this.events.push({ name, attributes: bounded.attributes, time: this.#time(time), droppedAttributesCount: bounded.dropped })
    return this
  }

  addLink(link: Link): this {
    if (this.#endedWarning()) return this
    const { linkCountLimit, attributePerLinkCountLimit, attributeValueLengthLimit } = this.#settings.limits
    if (linkCountLimit === 0) {
      this.droppedLinksCount++
      return this
    }
    if (this.links.length >= linkCountLimit) {
      if (this.droppedLinksCount === 0) diag.debug('Dropping extra links.')
      this.links.shift()
      this.droppedLinksCount++
    }
    const bounded = boundedAttributes(link.attributes, attributePerLinkCountLimit, attributeValueLengthLimit)
    const kept: Link = { context: link.context }
    if (Object.keys(bounded.attributes).length > 0) kept.attributes = bounded.attributes
    if (bounded.dropped > 0) kept.droppedAttributesCount = bounded.dropped
    this.links.push(kept)
    return this
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link)
    return this
  }

  /** As the SDK: UNSET changes nothing, OK is final, a message is kept for ERROR only. */
  setStatus(status: SpanStatus): this {
    if (this.#endedWarning() || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this
    const next: SpanStatus = { code: status.code }
    if (status.code === SpanStatusCode.ERROR) {
      if (typeof status.message === 'string') next.message = status.message
      else if (status.message !== null && status.message !== undefined) diag.warn(`Dropping invalid status.message of type '${typeof status.message}', expected 'string'`)
    }
    this.status = next
    return this
  }

  updateName(name: string): this {
    if (!this.#endedWarning()) this.name = name
    return this
  }

  end(endTime?: TimeInput): void {
    if (this.#ended) {
      diag.error(`${this.name} ${this.#spanContext.traceId}-${this.#spanContext.spanId} - You can only call end() on a span once.`)
      return
    }
    this.endTime = this.#time(endTime)
    this.#duration = hrTimeDuration(this.startTime, this.endTime)
    if (this.#duration[0] < 0) {
      diag.warn('Inconsistent start and end time, startTime > endTime. Setting span duration to 0ms.', this.startTime, this.endTime)
      this.endTime = [this.startTime[0], this.startTime[1]]
      this.#duration = [0, 0]
    }
    if (this.droppedEventsCount > 0) diag.warn(`Dropped ${this.droppedEventsCount} events because eventCountLimit reached`)
    if (this.droppedLinksCount > 0) diag.warn(`Dropped ${this.droppedLinksCount} links because linkCountLimit reached`)
    this.#settings.processor.onEnding?.(this)
    this.#ended = true
    this.#settings.processor.onEnd(this)
  }

  isRecording(): boolean {
    return !this.#ended
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {}
    if (typeof exception === 'string') attributes['exception.message'] = exception
    else if (exception) {
      if (exception.code) attributes['exception.type'] = exception.code.toString()
      else if (exception.name) attributes['exception.type'] = exception.name
      if (exception.message) attributes['exception.message'] = exception.message
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent(EXCEPTION_EVENT, attributes, time)
    else diag.warn(`Failed to record an exception ${String(exception)}`)
  }

  get duration(): HrTime {
    return this.#duration
  }

  get ended(): boolean {
    return this.#ended
  }

  /** A time given, or now: the start plus what the monotonic clock says has passed since (the SDK's way). */
  #time(input: TimeInput | undefined): HrTime {
    if (input !== undefined) return timeOf(input)
    if (this.#startedAt === null) return millisToHrTime(Date.now())
    return addHrTimes(this.startTime, millisToHrTime(otperformance.now() - this.#startedAt))
  }

  #endedWarning(): boolean {
    if (this.#ended) diag.warn(`Cannot execute the operation on ended Span {traceId: ${this.#spanContext.traceId}, spanId: ${this.#spanContext.spanId}}`)
    return this.#ended
  }
}

/** A given time as the SDK reads it: epoch or monotonic milliseconds, a Date, or an HrTime. */
function timeOf(input: TimeInput): HrTime {
  if (typeof input === 'number') return input <= otperformance.now() ? hrTime(input) : millisToHrTime(input)
  if (input instanceof Date) return millisToHrTime(input.getTime())
  if (isTimeInputHrTime(input)) return input
  return millisToHrTime(Date.now())
}

/** The SDK tracer's fields a lean tracer reads (private in the SDK: see the module comment). */
interface SdkTracerFields {
  readonly _sampler?: Sampler
  readonly _spanLimits?: Required<SpanLimits>
  readonly _idGenerator?: IdGenerator
  readonly _resource?: Resource
  readonly _spanProcessor?: SpanProcessor
  readonly instrumentationScope?: InstrumentationScope
}

/** Decides and starts spans as the SDK's tracer does, making `LeanSpan`s. */
export class LeanTracer implements Tracer {
  readonly #sampler: Sampler
  readonly #idGenerator: IdGenerator
  readonly #settings: SpanSettings

  constructor(sampler: Sampler, idGenerator: IdGenerator, settings: SpanSettings) {
    this.#sampler = sampler
    this.#idGenerator = idGenerator
    this.#settings = settings
  }

  startSpan(name: string, options: SpanOptions = {}, context: Context = contextApi.active()): Span {
    const from = options.root ? trace.deleteSpan(context) : context
    if (isTracingSuppressed(from)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT)
    const parentSpan = trace.getSpan(from)
    const parent = parentSpan?.spanContext()
    const spanId = this.#idGenerator.generateSpanId()
    // A lean parent's ids are valid by construction; any other parent (a caller's, extracted) is checked.
    const validParent = parent !== undefined && (parentSpan instanceof LeanSpan || trace.isSpanContextValid(parent)) ? parent : undefined
    const traceId = validParent?.traceId ?? this.#idGenerator.generateTraceId()
    const kind = options.kind ?? SpanKind.INTERNAL
    const links = options.links === undefined ? NO_LINKS : options.links.map((link) => ({ context: link.context, attributes: sanitizeAttributes(link.attributes) }))
    const attributes = options.attributes === undefined ? NO_ATTRIBUTES : sanitizeAttributes(options.attributes)
    const sampling = this.#sampler.shouldSample(from, traceId, name, kind, attributes, links)
    const traceState = sampling.traceState ?? validParent?.traceState
    const traceFlags = sampling.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE
    const spanContext: SpanContext = traceState === undefined ? { traceId, spanId, traceFlags } : { traceId, spanId, traceFlags, traceState }
    if (sampling.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext)
    const span = new LeanSpan(this.#settings, spanContext, name, kind, validParent, options.startTime, links)
    // The sampler may add attributes; either kind goes through the span's own checks and limits.
    if (attributes !== NO_ATTRIBUTES) span.setAttributes(attributes)
    if (sampling.attributes) span.setAttributes(sanitizeAttributes(sampling.attributes))
    this.#settings.processor.onStart(span as never, from)
    return span
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F
    const options = rest.length >= 2 ? (rest[0] as SpanOptions) : undefined
    const parent = rest.length === 3 ? (rest[1] as Context) : contextApi.active()
    const span = this.startSpan(name, options, parent)
    return contextApi.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span)
  }
}

/**
 * A lean tracer standing in for the SDK's `tracer`, configured as it is; null when the SDK's tracer
 * lacks a field this needs (then that tracer is the one to use).
 */
export function leanTracer(tracer: Tracer): LeanTracer | null {
  const fields = tracer as Tracer & SdkTracerFields
  const { _sampler: sampler, _spanLimits: limits, _idGenerator: idGenerator, _resource: resource, _spanProcessor: processor, instrumentationScope: scope } = fields
  if (!sampler || !limits || !idGenerator || !resource || !processor || !scope) return null
  return new LeanTracer(sampler, idGenerator, { resource, scope, limits, processor })
}
