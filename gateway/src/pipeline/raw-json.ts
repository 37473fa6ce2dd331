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

export function toJsonText(value: unknown): string {
  return (typeof value === 'object' && value !== null ? rawText.get(value) : undefined) ?? JSON.stringify(value)
}
