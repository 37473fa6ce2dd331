/**
 * Server-sent events decoding, done once for every provider. Turns a byte stream into
 * `UpstreamEvent`s with parsed JSON data; `data: [DONE]` ends the stream. Handles events split
 * across network chunks, CRLF or LF line ends, multi-line data, comments and keep-alives.
 */
import type { UpstreamEvent } from '../../providers/adapter.ts'
import { MalformedResponseError } from '../../providers/adapter.ts'

const DONE = '[DONE]'

export async function* decodeSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let eventName: string | undefined
  let dataLines: string[] = []

  // Returns false when the stream is over ([DONE]).
  const dispatch = function* (): Generator<UpstreamEvent, boolean> {
    if (dataLines.length === 0) {
      eventName = undefined
      return true
    }
    const data = dataLines.join('\n')
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
    yield name === undefined ? { data: parsed } : { event: name, data: parsed }
    return true
  }

  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    // A cursor over the buffer: one read often holds many events, and re-slicing the rest of
    // the buffer after every line would copy it again and again.
    let start = 0
    let newline: number
    while ((newline = buffer.indexOf('\n', start)) !== -1) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline
      const line = buffer.slice(start, end)
      start = newline + 1
      if (line === '') {
        if (!(yield* dispatch())) return
        continue
      }
      if (line.charCodeAt(0) === 58) continue // ':' comment / keep-alive
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      let value = colon === -1 ? '' : line.slice(colon + 1)
      if (value.charCodeAt(0) === 32) value = value.slice(1)
      if (field === 'data') dataLines.push(value)
      else if (field === 'event') eventName = value
      // `id` and `retry` carry nothing a gateway relays.
    }
    buffer = start === 0 ? buffer : buffer.slice(start)
  }
  buffer += decoder.decode()
  if (buffer.startsWith('data:')) dataLines.push(buffer.slice(5).trimStart())
  yield* dispatch()
}
