/**
 * The Responses API's event stream (`POST /v1/responses` with `stream: true`) as guardrails read
 * it. The provider's bytes are relayed, so guarding them means decoding the named events
 * (`response.output_text.delta`, `response.function_call_arguments.delta`, lifecycle events),
 * judging and holding them like chat chunks, and writing each event back (its JSON text as the
 * provider sent it, unless the gateway changed it).
 *
 * Verdicts ride on the stream's terminal lifecycle event (`response.completed`, `.incomplete` or
 * `.failed`) as `response.hook_results`, not on an event of their own: the OpenAI SDK's
 * `responses.stream()` refuses event types it does not know. The terminal event is therefore held
 * until the final verdict, whatever the hold-back, so a denied answer never reaches the client
 * marked complete.
 */
import type { HookResult } from '../core/exchange-types.ts'
import { GatewayError } from '../core/errors.ts'
import { MalformedResponseError, type UpstreamEvent } from '../providers/adapter.ts'
import { decodeSseBatches } from '../upstream/framing/sse.ts'
import { hookResultsView } from './blocked.ts'

const TERMINAL_TYPES: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed'])

function eventData(chunk: unknown): Record<string, unknown> | null {
  const data = (chunk as UpstreamEvent | null)?.data
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : null
}

/** The event that ends a response: the last one a guarded stream releases. */
export function isTerminalResponseEvent(chunk: unknown): boolean {
  const type = eventData(chunk)?.type
  return typeof type === 'string' && TERMINAL_TYPES.has(type)
}

/** A terminal event with the verdicts on its response; other events unchanged. */
export function withResponseVerdicts(chunk: unknown, results: readonly HookResult[]): unknown {
  const data = eventData(chunk)
  if (!data || !isTerminalResponseEvent(chunk)) return chunk
  const response = typeof data.response === 'object' && data.response !== null ? (data.response as Record<string, unknown>) : {}
  const event = (chunk as UpstreamEvent).event
  // No `raw`: the event changed, so the writer serialises it again.
  return { ...(event === undefined ? {} : { event }), data: { ...data, response: { ...response, hook_results: hookResultsView(results) } } } satisfies UpstreamEvent
}

/** The provider's event stream as batches of parsed events (one batch per network read). */
export async function* decodeResponseEvents(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent[]> {
  try {
    yield* decodeSseBatches(bytes)
  } catch (error) {
    // An event that is not JSON (or too large) is the provider's fault, not a network failure.
    if (error instanceof MalformedResponseError) throw new GatewayError('upstream_malformed_response', 'The provider sent a response event Gatehouse could not read, so its guardrails cannot judge it', { cause: error })
    throw error
  }
}

const encoder = new TextEncoder()

function frame(chunk: unknown): string {
  const { event, data, raw } = chunk as UpstreamEvent
  // Data the provider spread over several lines is written on one.
  const text = raw !== undefined && !raw.includes('\n') ? raw : JSON.stringify(data)
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${text}\n\n`
}

/** Events back to bytes, one write per batch. */
export async function* encodeResponseEvents(batches: AsyncIterable<readonly unknown[]>): AsyncGenerator<Uint8Array> {
  for await (const batch of batches) {
    let text = ''
    for (const chunk of batch) text += frame(chunk)
    if (text.length > 0) yield encoder.encode(text)
  }
}

/** Attaches the verdicts known when the terminal event passes (a stream no output guardrail reads). */
export async function* verdictsOnTerminal(batches: AsyncIterable<readonly unknown[]>, results: readonly HookResult[]): AsyncGenerator<readonly unknown[]> {
  for await (const batch of batches) yield batch.map((chunk) => withResponseVerdicts(chunk, results))
}
