/**
 * Server-sent events kept as bytes, for streams relayed as the provider wrote them. Each network
 * read becomes the whole events it completes (a partial event waits for the next read), and only
 * the events that may matter are decoded: those whose bytes hold one of the caller's markers
 * (`"usage":{`, an in-band `"error"`...) and named ones. `data: [DONE]` ends the stream. A
 * provider that ends lines with CR LF (or CR) has them turned into LF first, so the client always
 * gets whole, LF-framed events, and an error event can follow any of them directly.
 *
 * One scan of a read for every marker costs a fraction of splitting it into lines, which is the
 * point: a typical stream has one or two notable events among twenty.
 */
import { MalformedResponseError } from '../../providers/adapter.ts'
import { sseEventFields } from '../../core/relayed-events.ts'
import { defaultSseLimits, type SseLimits } from './sse.ts'

const LF = 0x0a
const CR = 0x0d
const BLANK_LINE = '\n\n'
const BLANK_LINE_BYTES = Buffer.from(BLANK_LINE)
const DONE = '[DONE]'
/** A named event's `event:` line after the line before it; an event that starts with one is checked apart. */
const NAMED = '\nevent:'
const NAME_FIELD = 'event:'

/** An event among a read's bytes that the caller must look at: where it lies, and its fields. */
export interface NotableEvent {
  /** Byte offsets in the read's `bytes`: from the event's first line to just past its blank line. */
  readonly start: number
  readonly end: number
  readonly event?: string
  readonly data: string
}

export interface RelayedRead {
  /** Whole events, LF line ends, as the provider sent them; `[DONE]` and what follows it cut off. */
  readonly bytes: Buffer
  /** Events holding a marker, or named, in order. */
  readonly notable: readonly NotableEvent[]
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Built once per marker list (an adapter's constant): compiling one per stream was a visible cost.
 * Sharing a global pattern is safe because every scan sets `lastIndex` and runs without awaiting.
 */
const patterns = new WeakMap<readonly string[], RegExp>()

/**
 * One pattern for every marker, `[DONE]` and event names: the bytes are scanned once (as latin1
 * text, so that string offsets are byte offsets). One `Buffer.indexOf` per marker cost five times
 * as much: the markers start with a quote, which JSON has every few bytes.
 */
function markerPattern(markers: readonly string[]): RegExp {
  let pattern = patterns.get(markers)
  if (pattern === undefined) {
    pattern = new RegExp([DONE, NAMED, ...markers].map(escapeRegExp).join('|'), 'g')
    patterns.set(markers, pattern)
  }
  return pattern
}

const markerOnlyPatterns = new WeakMap<readonly string[], RegExp>()

/**
 * The caller's markers alone, to test an event's data: one alternation costs a quarter of an
 * `includes` per marker, whose search stops at every quote of the JSON (the markers start with one).
 */
function markersOnlyPattern(markers: readonly string[]): RegExp {
  let pattern = markerOnlyPatterns.get(markers)
  if (pattern === undefined) {
    // A marker list can be empty; a pattern that never matches keeps `test` meaning "holds a marker".
    pattern = markers.length === 0 ? /(?!)/ : new RegExp(markers.map(escapeRegExp).join('|'))
    markerOnlyPatterns.set(markers, pattern)
  }
  return pattern
}


/** CR LF and lone CR as LF (byte for byte otherwise); a trailing CR ends its line already, so an LF that follows it is dropped. */
function withLfLineEnds(bytes: Buffer, skipLeadingLf: boolean): { bytes: Buffer; endsWithCr: boolean } {
  const from = skipLeadingLf && bytes[0] === LF ? 1 : 0
  const endsWithCr = bytes[bytes.length - 1] === CR
  if (bytes.indexOf(CR, from) === -1) return { bytes: from === 0 ? bytes : bytes.subarray(from), endsWithCr }
  return { bytes: Buffer.from(bytes.toString('latin1', from).replace(/\r\n?/g, '\n'), 'latin1'), endsWithCr }
}

/**
 * Reads a provider's event stream as the whole events of each network read (`RelayedRead`), one
 * read per call; null once the stream ended (after `[DONE]`, or with the body: a last event
 * without its blank line counts). `markers`: strings whose presence in an event's bytes makes it
 * notable. Not an async generator: see `pipeline/batches.ts` for why the stream path has none.
 */
export class SseRelayReader {
  readonly #body: AsyncIterator<Uint8Array>
  readonly #markers: RegExp
  readonly #pattern: RegExp
  readonly #limits: SseLimits
  /**
   * The unfinished event, as the pieces it arrived in: a new read is searched for a blank line
   * alone and the pieces are joined once, when one ends the event. Joining and searching the
   * whole held text on every read was quadratic: an endless line of tens of MiB held the event
   * loop for seconds and the process grew by hundreds of MiB.
   */
  #held: Buffer[] = []
  #heldBytes = 0
  /** Bytes since the last LF of the held pieces: the length of the unfinished line. */
  #heldLineBytes = 0
  #afterCr = false
  #over = false

  constructor(body: AsyncIterator<Uint8Array>, markers: readonly string[], limits: SseLimits = defaultSseLimits) {
    this.#body = body
    this.#markers = markersOnlyPattern(markers)
    this.#pattern = markerPattern(markers)
    this.#limits = limits
  }

  async read(): Promise<RelayedRead | null> {
    while (!this.#over) {
      const next = await this.#body.next()
      if (next.done) {
        this.#over = true
        return this.#rest()
      }
      const piece = next.value
      if (piece.byteLength === 0) continue
      const received = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength)
      const normal = withLfLineEnds(received, this.#afterCr)
      this.#afterCr = normal.endsWithCr
      if (normal.bytes.length === 0) continue
      if (!this.#endsEvent(normal.bytes)) {
        this.#hold(normal.bytes)
        continue
      }
      const bytes = this.#held.length === 0 ? normal.bytes : Buffer.concat([...this.#held, normal.bytes])
      this.#held = []
      this.#heldBytes = 0
      this.#heldLineBytes = 0
      const whole = bytes.lastIndexOf(BLANK_LINE_BYTES) + 2
      if (whole < bytes.length) this.#hold(bytes.subarray(whole))
      const { read, done } = this.#split(whole === bytes.length ? bytes : bytes.subarray(0, whole))
      if (done) this.#over = true
      if (read.bytes.length > 0) return read
    }
    return null
  }

  /** Whether `piece` holds a blank line, counting one that starts in the held pieces' last byte. */
  #endsEvent(piece: Buffer): boolean {
    if (piece.indexOf(BLANK_LINE_BYTES) !== -1) return true
    const last = this.#held[this.#held.length - 1]
    return piece[0] === LF && last !== undefined && last[last.length - 1] === LF
  }

  /** Keeps a piece of an unfinished event, within the limits on an event and on a line. */
  #hold(piece: Buffer): void {
    this.#held.push(piece)
    this.#heldBytes += piece.length
    const lastLf = piece.lastIndexOf(LF)
    this.#heldLineBytes = lastLf === -1 ? this.#heldLineBytes + piece.length : piece.length - lastLf - 1
    if (this.#heldBytes > this.#limits.maxEventChars) throw new MalformedResponseError(`a stream event exceeds ${this.#limits.maxEventChars} bytes`)
    if (this.#heldLineBytes > this.#limits.maxLineChars) throw new MalformedResponseError(`a stream line exceeds ${this.#limits.maxLineChars} bytes`)
  }

  /** The body ended inside an event: it ends there. */
  #rest(): RelayedRead | null {
    if (this.#held.length === 0) return null
    const held = Buffer.concat(this.#held)
    this.#held = []
    const { read } = this.#split(Buffer.concat([held, held[held.length - 1] === LF ? BLANK_LINE_BYTES.subarray(1) : BLANK_LINE_BYTES]))
    return read.bytes.length > 0 ? read : null
  }

  /** A read's whole events and its notable ones; `done` when `[DONE]` ended the stream in them. */
  #split(bytes: Buffer): { read: RelayedRead; done: boolean } {
    const text = bytes.toString('latin1')
    const notable: NotableEvent[] = []
    let hit = text.startsWith(NAME_FIELD) ? 0 : nextHit(this.#pattern, text, 0)
    while (hit !== -1) {
      const blankBefore = text.lastIndexOf(BLANK_LINE, hit)
      const start = blankBefore === -1 ? 0 : blankBefore + 2
      const blankAfter = text.indexOf(BLANK_LINE, hit)
      const end = blankAfter === -1 ? text.length : blankAfter + 2
      const fields = sseEventFields(bytes.toString('utf8', start, blankAfter === -1 ? text.length : blankAfter))
      if (fields?.data === DONE) return { read: { bytes: bytes.subarray(0, start), notable }, done: true }
      // A hit on `[DONE]` inside some text, say, is nothing to look at.
      if (fields && (fields.event !== undefined || this.#markers.test(fields.data))) notable.push({ start, end, ...fields })
      // Past this event: other hits in it would find it again.
      hit = nextHit(this.#pattern, text, end)
    }
    return { read: { bytes, notable }, done: false }
  }
}

/** The reads of `body` as an async iterable (`SseRelayReader` one call at a time). */
export function relaySseReads(body: AsyncIterable<Uint8Array>, markers: readonly string[], limits: SseLimits = defaultSseLimits): AsyncIterable<RelayedRead> {
  const reader = new SseRelayReader(body[Symbol.asyncIterator](), markers, limits)
  return {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<RelayedRead>> => {
        const read = await reader.read()
        return read === null ? { done: true, value: undefined } : { done: false, value: read }
      },
    }),
  }
}

/** Where the pattern next matches in `text` from `from` (-1: nowhere). */
function nextHit(pattern: RegExp, text: string, from: number): number {
  pattern.lastIndex = from
  const match = pattern.exec(text)
  return match === null ? -1 : match.index
}
