/**
 * Google Cloud Vertex AI: Gemini models (`publishers/google`) with the Gemini transforms and Claude
 * models (`publishers/anthropic`) with the Anthropic ones, at
 * `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/...`.
 * Authentication is a Google OAuth access token (`upstream/signers/google-oauth.ts`).
 */
import type { ProviderAdapter } from '../adapter.ts'
import { parseAnthropicError } from '../anthropic/errors.ts'
import { parseGoogleError } from '../google/errors.ts'
import { isRecord } from '../shared/errors.ts'
import { vertexChat } from './chat.ts'
import { vertexNativeMessages } from './claude.ts'
import { vertexEmbeddings } from './embeddings.ts'
import { vertexBaseUrl } from './paths.ts'

export const vertexAI: ProviderAdapter = {
  kind: 'vertex-ai',
  defaultBaseUrl: null,
  baseUrlFor: vertexBaseUrl,
  auth: { type: 'google-oauth' },
  chat: vertexChat,
  embeddings: vertexEmbeddings,
  messages: vertexNativeMessages,
  passthrough: false,
  // Claude's errors keep Anthropic's envelope (`"type":"error"`); everything else is Google's.
  parseError: (status, headers, body) => (isRecord(body) && body.type === 'error' ? parseAnthropicError : parseGoogleError)(status, headers, body),
}
