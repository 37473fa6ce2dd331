/**
 * What OpenAI's upload routes (audio, images) share: the multipart form of a request, read by the
 * platform's own parser, and a refusal in OpenAI's error envelope naming the parameter.
 */
import type { Exchange } from './base.ts'
import { openaiErrorBody } from './openai-wire.ts'

export function refuse(exchange: Exchange, status: number, message: string, param: string | null): void {
  exchange.errorBody(status, openaiErrorBody(status, message, status === 404 ? 'model_not_found' : null, param))
}

/** The multipart form of an upload, parsed by the platform's own parser; null when it is not one. */
export async function formOf(exchange: Exchange): Promise<FormData | null> {
  const contentType = exchange.request.headers['content-type'] ?? ''
  if (!contentType.startsWith('multipart/form-data')) return null
  try {
    return await new Response(new Uint8Array(exchange.request.rawBody), { headers: { 'content-type': contentType } }).formData()
  } catch {
    return null
  }
}

export const field = (form: FormData, name: string): string | null => {
  const value = form.get(name)
  return typeof value === 'string' ? value : null
}
