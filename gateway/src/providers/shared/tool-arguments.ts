/** Tool call arguments: OpenAI carries them as a JSON string, most other APIs as an object. */
import type { Warning } from '../canonical.ts'
import { isRecord } from './errors.ts'
import { unsupportedParameter } from './warnings.ts'

/**
 * The arguments as an object. Empty means no arguments; anything that is not a JSON object is
 * reported (at `at`, e.g. `messages[2].tool_calls[0]`) and sent as `{}`.
 */
export function toolArgumentsObject(text: string | undefined, at: string, provider: string, warnings: Warning[]): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {}
  try {
    const parsed: unknown = JSON.parse(text)
    if (isRecord(parsed)) return parsed
  } catch {
    // reported below
  }
  warnings.push(unsupportedParameter(`${at}.function.arguments`, `${provider} needs tool arguments as a JSON object; {} was sent instead`))
  return {}
}
