/**
 * Removes credentials from text that came from somewhere else (an upstream's error message, which
 * may echo the request's authorization) before it is relayed to a client or written to a log.
 * Two passes: every known secret value (the provider's stored credentials) wherever it appears,
 * then anything shaped like a key whose value Gatehouse does not know (another provider's key, a
 * bearer token, an AWS key id or secret, a Gatehouse key, a long base64 or hex token).
 */
import type { SecretBag } from './secret.ts'

export const REDACTED = '[redacted]'

/** Shorter values (a region, a flag) would redact ordinary words; real credentials are longer. */
const MIN_KNOWN_SECRET_LENGTH = 8

const KEY_SHAPES: ReadonlyArray<[RegExp, string]> = [
  // Scheme and token: keep the scheme so the message still says what was refused.
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${REDACTED}`],
  // OpenAI, Anthropic (sk-ant-), DeepSeek and similar `sk-` keys; project keys `sk-proj-`.
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
  // Gatehouse API keys.
  [/\bghk_[A-Za-z0-9_-]{8,}/g, REDACTED],
  // AWS access key ids (long-term and session).
  [/\b(?:AKIA|ASIA|AIDA|AROA)[A-Z0-9]{16}\b/g, REDACTED],
  // Google API keys.
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, REDACTED],
  // GitHub, Slack, Hugging Face tokens.
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{20,})\b/g, REDACTED],
  // JWTs.
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
]

/** Runs of token characters; judged by `looksLikeToken` (a plain greedy class: linear, no backtracking blow-up). */
const TOKEN_RUN = /[A-Za-z0-9+/_=-]{32,}/g
const HEX = /^[0-9a-fA-F]+$/
const DIGIT = /\d/
const LETTER = /[A-Za-z]/

/** Long hex (32+), or long base64/base64url (40+) mixing letters and digits: AWS secrets, generic API keys. */
function looksLikeToken(run: string): boolean {
  if (HEX.test(run)) return true
  return run.length >= 40 && DIGIT.test(run) && LETTER.test(run)
}

function replaceAll(text: string, value: string): string {
  return text.includes(value) ? text.split(value).join(REDACTED) : text
}

/** Secret values worth looking for, longest first (a key that contains another is removed whole). */
export function knownSecretValues(credentials: SecretBag | undefined): string[] {
  if (!credentials) return []
  const values = new Set<string>()
  for (const secret of Object.values(credentials)) {
    const value = secret.reveal()
    if (value.length < MIN_KNOWN_SECRET_LENGTH) continue
    values.add(value)
    // A JSON-encoded service account or a key echoed inside a JSON string carries escapes.
    const escaped = JSON.stringify(value).slice(1, -1)
    if (escaped !== value) values.add(escaped)
  }
  return [...values].sort((a, b) => b.length - a.length)
}

export function scrubSecrets(text: string, known: readonly string[] = []): string {
  let out = text
  for (const value of known) out = replaceAll(out, value)
  for (const [pattern, replacement] of KEY_SHAPES) out = out.replace(pattern, replacement)
  return out.replace(TOKEN_RUN, (run) => (looksLikeToken(run) ? REDACTED : run))
}
