/**
 * Google Gemini API (generativelanguage.googleapis.com). Chat maps to `generateContent` and
 * `streamGenerateContent`, embeddings to `embedContent` / `batchEmbedContents`. The key travels in
 * the `x-goog-api-key` header, never in the URL.
 */
import type { ProviderAdapter } from '../adapter.ts'
import { geminiChat } from './chat.ts'
import { geminiEmbeddings } from './embeddings.ts'
import { parseGoogleError } from './errors.ts'

export const google: ProviderAdapter = {
  kind: 'google',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  auth: { type: 'header', name: 'x-goog-api-key' },
  chat: geminiChat((target) => `/models/${encodeURIComponent(target.upstreamModel)}`),
  embeddings: geminiEmbeddings,
  passthrough: false,
  parseError: parseGoogleError,
}
