/**
 * Warnings for request fields a provider cannot honour. A field is never dropped silently: either
 * an adapter maps it, or it lists the field as handled-elsewhere, or the caller gets a warning.
 */
import type { Warning } from '../canonical.ts'

export function unsupportedParameter(parameter: string, detail?: string): Warning {
  return detail === undefined ? { kind: 'unsupported_parameter', parameter } : { kind: 'unsupported_parameter', parameter, detail }
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null
}

/**
 * One warning per top-level field that is set and that the adapter does not map. `handled` lists
 * every field the adapter reads (including ones it reads to reject), so a new OpenAI field shows
 * up as a warning instead of vanishing.
 */
export function unhandledFieldWarnings(request: Readonly<Record<string, unknown>>, handled: ReadonlySet<string>, provider: string): Warning[] {
  const warnings: Warning[] = []
  for (const key of Object.keys(request)) {
    if (!handled.has(key) && isSet(request[key])) warnings.push(unsupportedParameter(key, `${provider} has no equivalent; the field was not sent`))
  }
  return warnings
}
