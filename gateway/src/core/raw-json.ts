/**
 * The JSON text a chunk was parsed from, kept when a stream step passed the parsed value through
 * unchanged (OpenAI-shaped providers): the writer sends that text instead of serialising the
 * chunk again. Sound because stream steps must not mutate event data (the adapter contract); a
 * step that builds a new chunk simply has no entry here.
 */
const rawText = new WeakMap<object, string>()

export function rememberRawJson(value: unknown, text: string): void {
  if (typeof value === 'object' && value !== null) rawText.set(value, text)
}

/**
 * A stream chunk relayed as the provider's JSON text, never parsed: what an OpenAI-shaped stream
 * carries when no stage reads chunk content. `chunkValue` parses it for whoever does need it.
 */
export class RawJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text
  return (typeof value === 'object' && value !== null ? rawText.get(value) : undefined) ?? JSON.stringify(value)
}

/** A text's JSON value, or the text itself when it is not JSON (an error body, a held answer gone bad). */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A chunk's value, parsing a relayed one. */
export function chunkValue(chunk: unknown): unknown {
  return chunk instanceof RawJson ? JSON.parse(chunk.text) : chunk
}
