/**
 * The response cache stage, for cacheable operations under a config that asks for it
 * (`cache: {mode: "simple", max_age}`). The key is the normalised request (the operation, what
 * answers it, the body without `user`/`metadata`, the `x-gateway-cache-namespace`), kept per
 * workspace. A hit is answered here (`x-gateway-cache-status: HIT`), streams replayed one event per
 * chunk as first received; a miss goes on and its answer is stored once it completed: a 200 JSON
 * answer, or a stream that ended cleanly. Errors, flagged (246) answers, partial streams and
 * answers an output guardrail denied (it sits inside this stage and throws) are never stored.
 *
 * Semantic mode (`cache: {mode: "semantic", embedding: {provider, model}, similarity_threshold}`):
 * an exact hit first (HIT); then, for requests semantic mode can answer safely (semantic-query.ts),
 * the last user turn is embedded through the workspace's own provider and the nearest stored turn
 * of the same partition (the rest of the request, exactly) answers when similar enough
 * (SEMANTIC HIT), else SEMANTIC MISS and the answer is stored with its embedding. Other requests
 * under a semantic config are cached as in simple mode (MISS, HIT).
 *
 * The cache is an optimisation, not a policy: when its store or the embedding call fails, the
 * request is served uncached (or by exact match only) and the failure logged, never refused.
 * Cache headers sent where no cache applies are answered with DISABLED, so a client sees they had
 * no effect.
 *
 * A cache on a target (config `targets[i].cache`) is looked up at each attempt of that target
 * (an attempt wrapper dispatch runs around each target attempt), keyed by the target's path and the body it is
 * sent; what the last attempt missed is stored here, on the way back, like a config's. An answer
 * from a target without a cache, under such a config, says DISABLED.
 */
import type { FastifyBaseLogger } from 'fastify'
import { header } from '../../core/headers.ts'
import { cacheKey, SEMANTIC_KEY_PREFIX, type CachedAnswer, type ResponseCache } from '../../cache/response-cache.ts'
import type { SemanticCache } from '../../cache/semantic-cache.ts'
import { semanticQuery, type SemanticQuery } from '../../cache/semantic-query.ts'
import type { CacheConfig } from '../../snapshot/config-schema.ts'
import { embedText } from './cache-embedding.ts'
import { exchangeCost } from './exchange-price.ts'
import { RawJson, toJsonText } from '../../core/raw-json.ts'
import { eventChunks } from '../../core/relayed-events.ts'
import { hasTargetCache } from '../../routing/plan.ts'
import { observeStream, type Answer, type CacheStatus, type Exchange, type Next, type RouteDecision, type StageFactory, type StreamAnswer } from '../stage.ts'

export const CACHE_STATUS_HEADER = 'x-gateway-cache-status'
export const CACHE_NAMESPACE_HEADER = 'x-gateway-cache-namespace'
export const CACHE_FORCE_REFRESH_HEADER = 'x-gateway-cache-force-refresh'

const DEFAULT_MAX_AGE_S = 86_400
/** Cosine similarity a stored turn must reach when the config names none (the common default of peers). */
export const DEFAULT_SIMILARITY_THRESHOLD = 0.95
const MAX_NAMESPACE_LENGTH = 256

export interface CacheStageDeps {
  cache: ResponseCache
  /** Semantic mode's index over `cache`; without it semantic configs are served as simple ones. */
  semantic?: SemanticCache
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

function recordStream(exchange: Exchange, answer: StreamAnswer, format: 'openai' | 'anthropic', store: (entry: CachedAnswer) => void): StreamAnswer {
  const chunks: Array<{ event?: string; data: string }> = []
  return observeStream(answer, {
    onBatch(batch) {
      for (const chunk of eventChunks(batch)) {
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
      store({ kind: 'stream', status: answer.status, chunks, usage, costUsd: exchangeCost(exchange, usage) })
    },
  })
}

/** The semantic half of a lookup: the partition and the embedding, once computed. */
interface SemanticPlan {
  readonly partition: string
  readonly vector: Float32Array
  readonly threshold: number
}

/** Where a miss's answer goes once it is known good: its key, lifetime and, in semantic mode, its embedding. */
interface PendingStore {
  readonly key: string
  readonly ttlMs: number
  readonly semantic: SemanticPlan | null
}

type Lookup = { readonly hit: Answer } | { readonly miss: PendingStore }

function setStatus(exchange: Exchange, status: CacheStatus): void {
  exchange.facts.cacheStatus = status
  exchange.responseHeaders[CACHE_STATUS_HEADER] = status
}

export function cacheStage(deps: CacheStageDeps): StageFactory {
  const { cache, semantic, logger } = deps
  const failed = (what: string) => (error: unknown) => logger?.warn({ err: error }, `response cache ${what} failed; serving uncached`)
  const read = <T>(lookup: Promise<T>): Promise<T | null> =>
    lookup.catch((error: unknown) => {
      failed('read')(error)
      return null
    })

  /** Embeds the request's last user turn when semantic mode applies to it; null otherwise (or when embedding failed). */
  async function planSemantic(exchange: Exchange, settings: CacheConfig, query: SemanticQuery, identity: string, namespace: string | null, user: string | null): Promise<SemanticPlan | null> {
    const embedding = settings.embedding
    if (!embedding) return null
    const route = `${identity}|embedding:${embedding.provider}/${embedding.model}`
    const partition = cacheKey({ operation: exchange.operation.name, route, body: query.filter, namespace, user })
    try {
      const vector = await embedText(exchange, embedding, query.text)
      return { partition, vector, threshold: settings.similarity_threshold ?? DEFAULT_SIMILARITY_THRESHOLD }
    } catch (error) {
      failed('embedding')(error)
      return null
    }
  }

  /**
   * Looks the request up under `settings`: `identity` is what answers it (a config, or one of its
   * targets), `body` what that is sent. Sets the status; a miss says where its answer is stored.
   */
  async function lookup(exchange: Exchange, settings: CacheConfig, identity: string, body: Record<string, unknown>): Promise<Lookup> {
    const operation = exchange.operation
    const namespace = header(exchange.headers, CACHE_NAMESPACE_HEADER)?.slice(0, MAX_NAMESPACE_LENGTH) ?? null
    const user = settings.per_user === true && typeof body.user === 'string' ? body.user : null
    const exactKey = cacheKey({ operation: operation.name, route: identity, body, namespace, user })
    const workspaceId = exchange.context.workspaceId
    const refresh = header(exchange.headers, CACHE_FORCE_REFRESH_HEADER) === 'true'
    const query = settings.mode === 'semantic' && semantic !== undefined ? semanticQuery(operation.name, body) : null
    // Semantic entries are marked in their key, so a replica loading a workspace finds them.
    const key = query !== null ? SEMANTIC_KEY_PREFIX + exactKey : exactKey
    const answered = (status: 'HIT' | 'SEMANTIC HIT', entry: CachedAnswer): Lookup => {
      setStatus(exchange, status)
      exchange.facts.cacheSavedCostUsd = entry.costUsd ?? null
      return { hit: replay(entry, operation.format) }
    }
    if (!refresh) {
      const hit = await read(cache.get(workspaceId, key))
      if (hit !== null) return answered('HIT', hit)
    }
    const plan = query !== null ? await planSemantic(exchange, settings, query, identity, namespace, user) : null
    if (plan !== null && !refresh) {
      const hit = await read(semantic!.lookup(workspaceId, plan.partition, plan.vector, plan.threshold))
      if (hit !== null) {
        exchange.facts.annotations.cacheSimilarity = Math.round(hit.similarity * 10_000) / 10_000
        return answered('SEMANTIC HIT', hit.answer)
      }
    }
    setStatus(exchange, refresh ? 'REFRESH' : plan !== null ? 'SEMANTIC MISS' : 'MISS')
    return { miss: { key, ttlMs: (settings.max_age ?? DEFAULT_MAX_AGE_S) * 1000, semantic: plan } }
  }

  /** Stores a good answer (a 200 JSON answer now, a stream once it ended cleanly); returns the answer to hand on. */
  function storeAnswer(exchange: Exchange, pending: PendingStore, answer: Answer): Answer {
    const workspaceId = exchange.context.workspaceId
    const store = (entry: CachedAnswer): void => {
      const plan = pending.semantic
      const stored = plan !== null ? semantic!.store(workspaceId, pending.key, plan.partition, plan.vector, entry, pending.ttlMs) : cache.set(workspaceId, pending.key, entry, pending.ttlMs)
      void stored.catch(failed('write'))
    }
    if (answer.kind === 'json' && answer.status === 200) {
      const usage = answer.usage ?? null
      store({ kind: 'json', status: 200, body: toJsonText(answer.body), usage, costUsd: exchangeCost(exchange, usage) })
      return answer
    }
    if (answer.kind === 'stream' && answer.status === 200) return recordStream(exchange, answer, exchange.operation.format, store)
    return answer
  }

  /** A config's cache, or its targets' caches, around the rest of the pipeline. */
  async function underConfig(exchange: Exchange, route: Extract<RouteDecision, { kind: 'config' }>, body: Record<string, unknown>, next: Next): Promise<Answer> {
    const config = route.config
    let pending: PendingStore | null = null
    if (config.cache !== null) {
      const found = await lookup(exchange, config.cache, config.identity, body)
      if ('hit' in found) return found.hit
      pending = found.miss
    } else if (hasTargetCache(route.plan)) {
      // Each attempt looks up under its target's cache; the last attempt's decides what is stored.
      ;(exchange.attemptWrappers ??= []).push(async ({ leaf, body: sent }, attempt) => {
        pending = null
        if (leaf.cache === null || sent === null) {
          setStatus(exchange, 'DISABLED')
          return attempt()
        }
        const found = await lookup(exchange, leaf.cache, `${config.identity}#${leaf.path}`, sent)
        if ('hit' in found) return found.hit
        pending = found.miss
        return attempt()
      })
    } else {
      return disabledIfAsked(exchange, next)
    }
    // Stored only once the answer came back through the output guardrails (inside this stage).
    const answer = await next()
    return pending === null ? answer : storeAnswer(exchange, pending, answer)
  }

  return {
    name: 'cache',
    forOperation(operation) {
      if (!operation.cacheable) return null
      return {
        name: 'cache',
        // Chunks are recorded as text, which relayed chunks already are.
        readsStreamChunks: false,
        run(exchange, next) {
          const route = exchange.route
          const body = exchange.body
          // Not under a config: no async frame of this stage's (the plain path).
          if (route?.kind !== 'config' || body === null) return disabledIfAsked(exchange, next)
          return underConfig(exchange, route, body, next)
        },
      }
    },
  }
}

/** Cache headers sent where no cache applies are answered with DISABLED, so the client sees they had no effect. */
function disabledIfAsked(exchange: Exchange, next: () => Promise<Answer>): Promise<Answer> {
  if (header(exchange.headers, CACHE_FORCE_REFRESH_HEADER) !== undefined || header(exchange.headers, CACHE_NAMESPACE_HEADER) !== undefined) setStatus(exchange, 'DISABLED')
  return next()
}
