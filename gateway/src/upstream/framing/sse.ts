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
 * `parse: false` leaves each event's JSON unparsed (`data` undefined, `raw` set): for streams that
 * are relayed as the provider's own text, where parsing every event would be wasted work.
 */
export async function* decodeSseBatches(body: AsyncIterable<Uint8Array>, parse = true): AsyncGenerator<UpstreamEvent[]> {
  const decoder = new TextDecoder()
  let buffer = ''
  let eventName: string | undefined
  let dataLines: string[] = []
  let batch: UpstreamEvent[] = []

  // Completes the event the blank line ended; false when the stream is over ([DONE]).
  const complete = (): boolean => {
    if (dataLines.length === 0) {
      eventName = undefined
      return true
    }
    const data = dataLines.length === 1 ? dataLines[0]! : dataLines.join('\n')
    const name = eventName
    dataLines = []
    eventName = undefined
    if (data === DONE) return false
    if (!parse) {
      batch.push(name === undefined ? { data: undefined, raw: data } : { event: name, data: undefined, raw: data })
      return true
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(data)
    } catch {
      throw new MalformedResponseError(`stream event is not JSON: ${data.slice(0, 120)}`)
    }
    batch.push(name === undefined ? { data: parsed, raw: data } : { event: name, data: parsed, raw: data })
    return true
  }

  // Reads lines from `buffer` (a cursor, not re-slicing the rest after every line); returns the
  // index where an incomplete line starts, or -1 when [DONE] ended the stream.
  const readLines = (): number => {
    let start = 0
    let newline: number
    while ((newline = buffer.indexOf('\n', start)) !== -1) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === CARRIAGE_RETURN ? newline - 1 : newline
      const line = buffer.slice(start, end)
      start = newline + 1
      if (line === '') {
        if (!complete()) return -1
        continue
      }
      if (line.charCodeAt(0) === COLON) continue // comment / keep-alive
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      let value = colon === -1 ? '' : line.slice(colon + 1)
      if (value.charCodeAt(0) === SPACE) value = value.slice(1)
      if (field === 'data') dataLines.push(value)
      else if (field === 'event') eventName = value
      // `id` and `retry` carry nothing a gateway relays.
    }
    return start
  }

  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    const rest = readLines()
    if (batch.length > 0) {
      const ready = batch
      batch = []
      yield ready
    }
    if (rest === -1) return
    buffer = rest === 0 ? buffer : buffer.slice(rest)
  }
  buffer += decoder.decode()
  if (buffer.startsWith('data:')) dataLines.push(buffer.slice(5).trimStart())
  complete()
  if (batch.length > 0) yield batch
}

/** One event at a time, for consumers that see few events (the snapshot stream, tests). */
export async function* decodeSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  for await (const batch of decodeSseBatches(body)) yield* batch
}
