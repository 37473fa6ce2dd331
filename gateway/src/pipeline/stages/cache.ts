/**
 * The response cache stage, for cacheable operations under a config that asks for it
 * (`cache: {mode: "simple", max_age}`). The key is the normalised request (the operation, what
 * answers it, the body without `user`/`metadata`, the `x-gateway-cache-namespace`), kept per
 * workspace. A hit is answered here (`x-gateway-cache-status: HIT`), streams replayed one event per
 * chunk as first received; a miss goes on and its answer is stored once it completed: a 200 JSON
 * answer, or a stream that ended cleanly. Errors, flagged (246) answers, partial streams and
 * answers an output guardrail denied (it sits inside this stage and throws) are never stored.
 *
 * The cache is an optimisation, not a policy: when its store fails, the request is served
 * uncached and the failure logged, never refused.
 */
import type { FastifyBaseLogger } from 'fastify'
import { header } from '../../core/headers.ts'
import { cacheKey, type CachedAnswer, type ResponseCache } from '../../cache/response-cache.ts'
import { RawJson, toJsonText } from '../../core/raw-json.ts'
import { observeStream, type Answer, type Exchange, type StageFactory, type StreamAnswer } from '../stage.ts'

export const CACHE_STATUS_HEADER = 'x-gateway-cache-status'
export const CACHE_NAMESPACE_HEADER = 'x-gateway-cache-namespace'
export const CACHE_FORCE_REFRESH_HEADER = 'x-gateway-cache-force-refresh'

const DEFAULT_MAX_AGE_S = 86_400
const MAX_NAMESPACE_LENGTH = 256

export interface CacheStageDeps {
  cache: ResponseCache
  logger?: Pick<FastifyBaseLogger, 'warn'>
}

interface NamedChunk {
  readonly event?: string
  readonly data: unknown
}

/** A stored answer made live again, in the route's format. */
function replay(entry: CachedAnswer, format: 'openai' | 'anthropic'): Answer {
  if (entry.kind === 'json') return { kind: 'json', status: entry.status, body: new RawJson(entry.body ?? 'null'), usage: entry.usage }
  const chunks = entry.chunks ?? []
  async function* batches(): AsyncGenerator<readonly unknown[]> {
    for (const chunk of chunks) {
      const data = new RawJson(chunk.data)
      yield [format === 'anthropic' ? { event: chunk.event, data } : data]
    }
  }
  const usage = entry.usage ?? { inputTokens: 0, outputTokens: 0 }
  return { kind: 'stream', status: entry.status, batches: batches(), result: () => ({ usage, finishReason: { unified: 'stop' } }) }
}

/** What answers the request, as part of the key: the config (a cache is set on configs only). */
function routeIdentity(exchange: Exchange): string | null {
  const route = exchange.route
  return route?.kind === 'config' && route.config.cache !== null ? route.config.identity : null
}

function recordStream(answer: StreamAnswer, format: 'openai' | 'anthropic', store: (entry: CachedAnswer) => void): StreamAnswer {
  const chunks: Array<{ event?: string; data: string }> = []
  return observeStream(answer, {
    onBatch(batch) {
      for (const chunk of batch) {
        if (format === 'anthropic') {
          const named = chunk as NamedChunk
          chunks.push({ ...(named.event === undefined ? {} : { event: named.event }), data: toJsonText(named.data) })
        } else {
          chunks.push({ data: toJsonText(chunk) })
        }
      }
      return batch
    },
    onEnd({ completed, error }) {
      if (!completed || error !== null) return
      const usage = answer.result()?.usage ?? null
      store({ kind: 'stream', status: answer.status, chunks, usage: usage && { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } })
    },
  })
}

export function cacheStage(deps: CacheStageDeps): StageFactory {
  const { cache, logger } = deps
  const failed = (what: string) => (error: unknown) => logger?.warn({ err: error }, `response cache ${what} failed; serving uncached`)
  return {
    name: 'cache',
    forOperation(operation) {
      if (!operation.cacheable) return null
      const format = operation.format
      return {
        name: 'cache',
        // Chunks are recorded as text, which relayed chunks already are.
        readsStreamChunks: false,
        async run(exchange, next) {
          const identity = routeIdentity(exchange)
          const settings = exchange.route?.kind === 'config' ? exchange.route.config.cache : null
          if (identity === null || settings === null || exchange.body === null) return next()
          const namespace = header(exchange.headers, CACHE_NAMESPACE_HEADER)?.slice(0, MAX_NAMESPACE_LENGTH) ?? null
          const user = settings.per_user === true && typeof exchange.body.user === 'string' ? exchange.body.user : null
          const key = cacheKey({ operation: operation.name, route: identity, body: exchange.body, namespace, user })
          const workspaceId = exchange.context.workspaceId
          const refresh = header(exchange.headers, CACHE_FORCE_REFRESH_HEADER) === 'true'

          if (!refresh) {
            const hit = await cache.get(workspaceId, key).catch((error: unknown) => {
              failed('read')(error)
              return null
            })
            if (hit !== null) {
              exchange.facts.cacheStatus = 'HIT'
              exchange.responseHeaders[CACHE_STATUS_HEADER] = 'HIT'
              return replay(hit, format)
            }
          }
          const status = refresh ? 'REFRESH' : 'MISS'
          exchange.facts.cacheStatus = status
          exchange.responseHeaders[CACHE_STATUS_HEADER] = status

          const ttlMs = (settings.max_age ?? DEFAULT_MAX_AGE_S) * 1000
          const store = (entry: CachedAnswer): void => void cache.set(workspaceId, key, entry, ttlMs).catch(failed('write'))
          const answer = await next()
          if (answer.kind === 'json' && answer.status === 200) {
            store({ kind: 'json', status: 200, body: toJsonText(answer.body), usage: answer.usage && { inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens } })
            return answer
          }
          if (answer.kind === 'stream' && answer.status === 200) return recordStream(answer, format, store)
          return answer
        },
      }
    },
  }
}
