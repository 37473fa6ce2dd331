/** Cohere errors: `{"message": "..."}` (v2 may add an `id`), the HTTP status telling the kind. */
import type { ProviderErrorInfo } from '../adapter.ts'
import { errorInfo, fallbackMessage, isRecord } from '../shared/errors.ts'

export function parseCohereError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo {
  const message = isRecord(body) && typeof body.message === 'string' ? body.message : fallbackMessage(status, body)
  return errorInfo(status, headers, { message })
}
