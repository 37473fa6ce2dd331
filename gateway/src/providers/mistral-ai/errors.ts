/**
 * Mistral errors come in three shapes: `{"object":"error","message","type","param","code"}` at the
 * top level, FastAPI validation details `{"detail":[{"loc","msg","type"}]}` (422), and a bare
 * `{"message"}` from the edge (429). OpenAI's nested `{"error":{...}}` is read too.
 */
import type { ProviderErrorInfo } from '../adapter.ts'
import { parseOpenAIError } from '../openai/index.ts'
import { errorInfo, fallbackMessage, isRecord } from '../shared/errors.ts'

function validationMessage(detail: unknown): { message: string; param: string | null } | null {
  if (!Array.isArray(detail) || detail.length === 0) return null
  const first = detail[0]
  if (!isRecord(first)) return null
  const location = Array.isArray(first.loc) ? first.loc.filter((part) => part !== 'body').join('.') : ''
  const message = typeof first.msg === 'string' ? first.msg : 'Invalid request'
  return { message: location ? `${location}: ${message}` : message, param: location || null }
}

export function parseMistralError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo {
  if (isRecord(body) && isRecord(body.error)) return parseOpenAIError(status, headers, body)
  if (!isRecord(body)) return errorInfo(status, headers, { message: fallbackMessage(status, body) })
  const validation = validationMessage(body.detail) ?? (isRecord(body.message) ? validationMessage(body.message.detail) : null)
  const providerCode = typeof body.code === 'string' ? body.code : typeof body.type === 'string' ? body.type : null
  if (validation) return errorInfo(status, headers, { ...validation, providerCode })
  return errorInfo(status, headers, {
    message: typeof body.message === 'string' ? body.message : fallbackMessage(status, body),
    providerCode,
    param: typeof body.param === 'string' ? body.param : null,
  })
}
