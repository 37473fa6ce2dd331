/**
 * Answers Gatehouse relays without parsing (audio and images answers, their event streams), as a
 * usage reader sees them: the text a body window kept of them, and the usage object the provider
 * wrote into them.
 */
import type { Usage } from '../providers/canonical.ts'
import type { BodyText } from './body-window.ts'

export interface RelayedAnswer extends BodyText {
  readonly contentType: string
}

/** What a relayed answer used, as far as it says. */
export interface MeteredUsage {
  readonly usage: Usage
  /** Counted by Gatehouse rather than reported by the provider. */
  readonly estimated: boolean
  /** What the answer left unknown, in words; null when the usage is complete. */
  readonly unmetered: string | null
}

export const isJsonType = (contentType: string): boolean => contentType.includes('json')
export const isEventStreamType = (contentType: string): boolean => contentType.startsWith('text/event-stream')

/** A positive whole count, else 0. */
export const countOf = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0)

/**
 * The last `"usage": {...}` object in `text`. Quotes inside JSON strings are escaped and base64
 * audio has none, so a bare `"usage"` is a key; the object is read by balancing its braces.
 */
export function lastUsageObject(text: string): Record<string, unknown> | null {
  // A word "usage" in a transcript is a string value (`"usage"` then `,` `]` or `}`): look further back.
  for (let key = text.lastIndexOf('"usage"'); key !== -1; key = key === 0 ? -1 : text.lastIndexOf('"usage"', key - 1)) {
    const open = text.indexOf('{', key)
    if (open !== -1 && text.slice(key + '"usage"'.length, open).trim() === ':') return balancedObject(text, open)
  }
  return null
}

/** The JSON object opening at `open`, read by balancing its braces (usage objects hold no strings with braces). */
function balancedObject(text: string, open: number): Record<string, unknown> | null {
  let depth = 0
  for (let at = open; at < text.length; at++) {
    const char = text[at]
    if (char === '{') depth++
    else if (char === '}' && --depth === 0) {
      try {
        const parsed: unknown = JSON.parse(text.slice(open, at + 1))
        return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null
      } catch {
        return null
      }
    }
  }
  return null
}
