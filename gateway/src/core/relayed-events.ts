/**
 * Whole server-sent events relayed as the provider's bytes (OpenAI-shaped streams): the stream
 * path's cheapest chunk. Nothing is decoded, split or re-encoded for the client; the few stages
 * that read chunk content call `eventChunks`, which turns such a chunk into one `RawJson` per event
 * at that point, for that stage only.
 */
import { RawJson } from './raw-json.ts'

const BLANK_LINE = '\n\n'
const COLON = 58

/**
 * One or more whole events (each ended by a blank line, LF line ends), written to the client as
 * they are. Named events never travel this way (the decoder hands them on decoded).
 */
export class SseBytes {
  readonly bytes: Buffer
  constructor(bytes: Buffer) {
    this.bytes = bytes
  }

  /** Whether any event here carries data (a run of comments or keep-alives does not). */
  carriesData(): boolean {
    return this.bytes.includes('data:')
  }

  /** Each event's data as relayed JSON text, in order; events without data are left out. */
  events(): RawJson[] {
    const out: RawJson[] = []
    for (const block of this.bytes.toString('utf8').split(BLANK_LINE)) {
      const fields = sseEventFields(block)
      if (fields !== null) out.push(new RawJson(fields.data))
    }
    return out
  }
}

/** The fields of one event (its lines, without the blank line ending it); null when it has no data. */
export function sseEventFields(block: string): { event?: string; data: string } | null {
  let event: string | undefined
  let data: string | null = null
  for (const line of block.split('\n')) {
    if (line === '' || line.charCodeAt(0) === COLON) continue
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1)
    if (field === 'data') data = data === null ? value : `${data}\n${value}`
    else if (field === 'event') event = value
  }
  if (data === null) return null
  return event === undefined ? { data } : { event, data }
}

/**
 * A batch with every `SseBytes` replaced by its events (one `RawJson` each): for stages that look
 * at chunks one by one (guardrails, caches, traces with content, estimates). The same array when
 * there is none.
 */
export function eventChunks(batch: readonly unknown[]): readonly unknown[] {
  if (!batch.some((chunk) => chunk instanceof SseBytes)) return batch
  return batch.flatMap((chunk) => (chunk instanceof SseBytes ? chunk.events() : [chunk]))
}
