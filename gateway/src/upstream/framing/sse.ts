/**
 * Server-sent events decoding, done once for every provider. Turns a byte stream into
 * `UpstreamEvent`s with parsed JSON data; `data: [DONE]` ends the stream. Handles events split
 * across network chunks, CRLF or LF line ends, multi-line data, comments and keep-alives.
 *
 * Events come out in batches, one per network read: a provider often sends many events in one
 * packet, and handing each through the async iteration of every later stage cost more CPU than
 * decoding it.
 */
import type { UpstreamEvent } from '../../providers/adapter.ts'
import { MalformedResponseError } from '../../providers/adapter.ts'

const DONE = '[DONE]'
const CARRIAGE_RETURN = 13
const COLON = 58
const SPACE = 32

/**
 * Bounds on what one event may hold. A provider that sends a line without end (or an endless
 * event) would otherwise be buffered without limit; past these the stream ends with
 * `upstream_malformed_response`. Far above real events (a streamed image is a few MiB of base64).
 */
export interface SseLimits {
  maxLineChars: number
  maxEventChars: number
}

export const defaultSseLimits: SseLimits = { maxLineChars: 8 * 1024 * 1024, maxEventChars: 16 * 1024 * 1024 }

/**
 * Decodes a provider's event stream in batches, one per network read. (Streams relayed as the
 * provider's bytes are read by `sse-relay.ts` instead.)
 */
export async function* decodeSseBatches(body: AsyncIterable<Uint8Array>, limits: SseLimits = defaultSseLimits): AsyncGenerator<UpstreamEvent[]> {
  const decoder = new TextDecoder()
  // The unfinished line, as the pieces it arrived in: a new chunk is searched for its end alone,
  // never the text before it, and the pieces are joined once, when the line ends.
  let partial: string[] = []
  let partialChars = 0
  let eventName: string | undefined
  let dataLines: string[] = []
  let eventChars = 0
  let batch: UpstreamEvent[] = []

  // Completes the event the blank line ended; false when the stream is over ([DONE]).
  const complete = (): boolean => {
    eventChars = 0
    if (dataLines.length === 0) {
      eventName = undefined
      return true
    }
    const data = dataLines.length === 1 ? dataLines[0]! : dataLines.join('\n')
    const name = eventName
    dataLines = []
    eventName = undefined
    if (data === DONE) return false
    let parsed: unknown
    try {
      parsed = JSON.parse(data)
    } catch {
      throw new MalformedResponseError(`stream event is not JSON: ${data.slice(0, 120)}`)
    }
    batch.push(name === undefined ? { data: parsed, raw: data } : { event: name, data: parsed, raw: data })
    return true
  }

  // One complete line (without its end); false when [DONE] ended the stream.
  const line = (text: string): boolean => {
    if (text === '') return complete()
    if (text.charCodeAt(0) === COLON) return true // comment / keep-alive
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.charCodeAt(0) === SPACE) value = value.slice(1)
    if (field === 'data') {
      eventChars += value.length
      if (eventChars > limits.maxEventChars) throw new MalformedResponseError(`a stream event exceeds ${limits.maxEventChars} characters`)
      dataLines.push(value)
    } else if (field === 'event') eventName = value
    // `id` and `retry` carry nothing a gateway relays.
    return true
  }

  const tooLong = (): MalformedResponseError => new MalformedResponseError(`a stream line exceeds ${limits.maxLineChars} characters without ending`)

  // Reads the lines `text` ends; keeps what follows the last line end. False at [DONE].
  const feed = (text: string): boolean => {
    let start = 0
    let newline: number
    while ((newline = text.indexOf('\n', start)) !== -1) {
      let current = text.slice(start, newline)
      start = newline + 1
      if (partialChars > 0) {
        if (partialChars + current.length > limits.maxLineChars) throw tooLong()
        partial.push(current)
        current = partial.join('')
        partial = []
        partialChars = 0
      }
      if (current.charCodeAt(current.length - 1) === CARRIAGE_RETURN) current = current.slice(0, -1)
      if (!line(current)) return false
    }
    if (start < text.length) {
      partialChars += text.length - start
      if (partialChars > limits.maxLineChars) throw tooLong()
      partial.push(start === 0 ? text : text.slice(start))
    }
    return true
  }

  for await (const chunk of body) {
    const going = feed(decoder.decode(chunk, { stream: true }))
    if (batch.length > 0) {
      const ready = batch
      batch = []
      yield ready
    }
    if (!going) return
  }
  const rest = partial.join('') + decoder.decode()
  if (rest.startsWith('data:')) dataLines.push(rest.slice(5).trimStart())
  complete()
  if (batch.length > 0) yield batch
}

/** One event at a time, for consumers that see few events (the snapshot stream, tests). */
export async function* decodeSse(body: AsyncIterable<Uint8Array>, limits: SseLimits = defaultSseLimits): AsyncGenerator<UpstreamEvent> {
  for await (const batch of decodeSseBatches(body, limits)) yield* batch
}
