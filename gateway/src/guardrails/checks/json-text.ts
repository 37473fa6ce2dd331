/**
 * The JSON value a model answered with: the whole text when it parses, else the first fenced code
 * block, else the span from the first `{` to the last `}`. Models often wrap JSON in prose or fences.
 */
const FENCE = /```(?:json)?\s*\n([\s\S]*?)```/

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

export function extractJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const whole = tryParse(text.trim())
  if (whole.ok) return whole
  const fenced = FENCE.exec(text)
  if (fenced) {
    const inFence = tryParse(fenced[1]!.trim())
    if (inFence.ok) return inFence
  }
  const start = text.indexOf('{')
  const end = text.lastIndexOf('}')
  if (start !== -1 && end > start) return tryParse(text.slice(start, end + 1))
  return { ok: false }
}
