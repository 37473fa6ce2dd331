/**
 * Embeds a semantic cache query through one of the workspace's own providers, with the same
 * adapter path as POST /v1/embeddings (the provider's embeddings operation, translated, sent
 * through the SSRF-checked transport, its answer read into the OpenAI shape). The provider and
 * model are the config's `cache.embedding`; a provider the workspace may not use, or a model it
 * does not enable, fails like the same names would on a request.
 */
import { decodeVector } from '../../cache/response-cache.ts'
import { GatewayError } from '../../core/errors.ts'
import type { EmbeddingsRequest } from '../../providers/canonical.ts'
import { checkModelAllowed, resolveProvider, type RouteTarget } from '../../routing/target.ts'
import { attemptJson } from '../dispatch.ts'
import type { Exchange } from '../stage.ts'

/** An embedding call waits this long for the provider's first byte. */
const EMBEDDING_TIMEOUT_MS = 10_000

export interface EmbeddingChoice {
  readonly provider: string
  readonly model: string
}

/** Float embeddings as JSON numbers, or OpenAI's base64 little-endian float32. */
function toVector(embedding: number[] | string): Float32Array {
  return typeof embedding === 'string' ? decodeVector(embedding) : Float32Array.from(embedding)
}

export async function embedText(exchange: Exchange, choice: EmbeddingChoice, text: string): Promise<Float32Array> {
  const slug = choice.provider.startsWith('@') ? choice.provider.slice(1) : choice.provider
  const provider = resolveProvider(exchange.context.runtime, exchange.context.workspaceId, slug)
  checkModelAllowed(provider, choice.model)
  const operation = provider.adapter.embeddings
  if (!operation) throw new GatewayError('unsupported_operation', `Provider '@${provider.record.slug}' (${provider.adapter.kind}) does not serve embeddings`)
  const target: RouteTarget = { provider, upstreamModel: choice.model }
  const request: EmbeddingsRequest = { model: choice.model, input: text }
  const outcome = await attemptJson(operation, target, request, { signal: exchange.context.signal, firstByteTimeoutMs: EMBEDDING_TIMEOUT_MS })
  const first = outcome.response.data[0]?.embedding
  if (first === undefined) throw new GatewayError('upstream_malformed_response', `Provider '@${provider.record.slug}' answered the embedding request with no vector`)
  // Not priced on the record yet: it names the call and its tokens, so the spend can be traced.
  exchange.facts.annotations.cacheEmbedding = { provider: provider.record.slug, model: choice.model, inputTokens: outcome.usage.inputTokens }
  return toVector(first)
}
