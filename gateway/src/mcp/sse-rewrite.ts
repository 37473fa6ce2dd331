/**
 * Rewrites the JSON-RPC messages of a server-sent event stream (an MCP server answering a request
 * with `text/event-stream`), event by event: each event's `data` is parsed, handed to `rewrite`,
 * and written back when it changed; everything else (ids, comments, retry fields, events that are
 * not JSON) passes byte for byte. Events are bounded so a server cannot make the relay buffer
 * without limit.
 */
import { GatewayError } from '../core/errors.ts'

/** The largest event the relay holds while rewriting (a tool list is far smaller). */
export const MAX_EVENT_BYTES = 8 * 1024 * 1024

const encoder = new TextEncoder()

/** One event's text (without its blank-line terminator), rewritten when its data is a message `rewrite` changes. */
function rewriteEvent(event: string, rewrite: (message: unknown) => unknown): string {
  const lines = event.split(/\r\n|\r|\n/)
  const dataLines = lines.filter((line) => line.startsWith('data:'))
  if (dataLines.length === 0) return event
  const data = dataLines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n')
  let message: unknown
  try {
    message = JSON.parse(data)
  } catch {
    return event
  }
  const rewritten = rewrite(message)
  if (rewritten === message) return event
  const others = lines.filter((line) => !line.startsWith('data:'))
  return [...others, `data: ${JSON.stringify(rewritten)}`].join('\n')
}

/** Finds the end of the first complete event in `text`: the index after its blank line, or -1. */
function eventEnd(text: string): { end: number; next: number } | null {
  const match = /\r\n\r\n|\n\n|\r\r/.exec(text)
  return match ? { end: match.index, next: match.index + match[0].length } : null
}

export async function* rewriteSseMessages(source: AsyncIterable<Uint8Array>, rewrite: (message: unknown) => unknown): AsyncGenerator<Uint8Array> {
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of source) {
    pending += decoder.decode(chunk, { stream: true })
    let out = ''
    for (let found = eventEnd(pending); found !== null; found = eventEnd(pending)) {
      out += `${rewriteEvent(pending.slice(0, found.end), rewrite)}\n\n`
      pending = pending.slice(found.next)
    }
    if (pending.length > MAX_EVENT_BYTES) throw new GatewayError('upstream_response_too_large', 'The MCP server sent an event larger than the relay holds')
    if (out.length > 0) yield encoder.encode(out)
  }
  pending += decoder.decode()
  if (pending.length > 0) yield encoder.encode(rewriteEvent(pending, rewrite))
}
