import { describe, expect, it } from 'vitest'
import { backtracksBadly, configPath, validateConfig } from './config-schema.ts'

function firstIssue(value: unknown): { path: string; message: string } {
  const result = validateConfig(value)
  if (result.ok) throw new Error('expected the config to be refused')
  return { path: configPath(result.issues[0]!.path), message: result.issues[0]!.message }
}

describe('config schema', () => {
  it('takes simple and semantic caches on the config and on targets, refusing incomplete or mixed settings', () => {
    expect(validateConfig({ provider: '@openai', cache: { mode: 'simple', max_age: 60, per_user: true } }).ok).toBe(true)
    const semantic = { mode: 'semantic', similarity_threshold: 0.9, embedding: { provider: '@openai', model: 'text-embedding-3-small' } }
    expect(validateConfig({ provider: '@openai', cache: semantic }).ok).toBe(true)
    expect(firstIssue({ provider: '@openai', cache: { mode: 'semantic' } })).toEqual({ path: 'config.cache.embedding', message: expect.stringContaining('semantic mode needs an embedding') })
    expect(firstIssue({ provider: '@openai', cache: { mode: 'simple', similarity_threshold: 0.9 } }).path).toBe('config.cache.similarity_threshold')
    expect(firstIssue({ provider: '@openai', cache: { ...semantic, similarity_threshold: 1.5 } }).path).toBe('config.cache.similarity_threshold')
    expect(firstIssue({ provider: '@openai', cache: { mode: 'simple', max_age: 0 } }).path).toBe('config.cache.max_age')
    expect(firstIssue({ provider: '@openai', cache: { mode: 'fuzzy' } }).path).toBe('config.cache.mode')
    expect(validateConfig({ strategy: { mode: 'fallback' }, targets: [{ provider: '@a' }, { provider: '@b', cache: { mode: 'simple' } }] }).ok).toBe(true)
    expect(firstIssue({ strategy: { mode: 'fallback' }, targets: [{ provider: '@a' }, { provider: '@b', cache: { mode: 'semantic' } }] }).path).toBe('config.targets[1].cache.embedding')
  })

  it('accepts a root config naming no provider (the request names it), but not an unnamed target in a strategy', () => {
    expect(validateConfig({ retry: { attempts: 2 } })).toMatchObject({ ok: true, config: { retry: { attempts: 2 } } })
    expect(validateConfig({ request_timeout: 1000, override_params: { max_tokens: 5 } }).ok).toBe(true)
    expect(firstIssue({ strategy: { mode: 'fallback' }, targets: [{ provider: '@a' }, { strategy: { mode: 'single' }, targets: [{ retry: { attempts: 1 } }] }] }))
      .toEqual({ path: 'config.targets[1].targets[0]', message: 'name a provider (@slug or virtual_key) or a strategy with targets' })
  })

  it('accepts the issue example', () => {
    const result = validateConfig({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.team': { $eq: 'search' } }, then: 'fast' }], default: 'cheap' },
      targets: [
        { name: 'fast', provider: '@openai', override_params: { model: 'gpt-4o-mini' } },
        { name: 'cheap', virtual_key: 'groq-main', retry: { attempts: 2, on_status_codes: [429] } },
      ],
    })
    expect(result.ok).toBe(true)
  })

  it('accepts nested strategies with every target setting', () => {
    const result = validateConfig({
      strategy: { mode: 'fallback', on_status_codes: [429, 503] },
      retry: { attempts: 1, backoff_initial_ms: 100, backoff_max_ms: 1000, use_retry_after_header: true, max_retry_after_ms: 5000 },
      request_timeout: 10_000,
      circuit_breaker: { failure_threshold: 3, cooldown_ms: 5000 },
      targets: [
        { provider: '@a', custom_host: 'https://models.example.com/v1', forward_headers: ['x-request-source'] },
        { strategy: { mode: 'loadbalance' }, targets: [{ provider: '@b', weight: 0.7 }, { provider: '@c', weight: 0.3 }] },
      ],
    })
    expect(result).toMatchObject({ ok: true })
  })

  it.each<[string, unknown, string]>([
    ['an unknown field', { provider: '@a', retries: 2 }, 'config.retries'],
    ['an unknown nested field', { strategy: { mode: 'fallback' }, targets: [{ provider: '@a', retry: { attempts: 1, delay: 5 } }] }, 'config.targets[0].retry.delay'],
    ['a bad retry count', { strategy: { mode: 'fallback' }, targets: [{ provider: '@a' }, { provider: '@b', retry: { attempts: 99 } }] }, 'config.targets[1].retry.attempts'],
    ['a bad mode', { strategy: { mode: 'roundrobin' }, targets: [{ provider: '@a' }] }, 'config.strategy.mode'],
    ['targets without a strategy', { targets: [{ provider: '@a' }] }, 'config.strategy'],
    ['a strategy without targets', { strategy: { mode: 'single' } }, 'config.targets'],
    ['an empty target', { strategy: { mode: 'single' }, targets: [{}] }, 'config.targets[0]'],
    ['provider and targets together', { provider: '@a', strategy: { mode: 'single' }, targets: [{ provider: '@b' }] }, 'config.provider'],
    ['a deep bad field', { strategy: { mode: 'fallback' }, targets: [{ strategy: { mode: 'single' }, targets: [{ provider: '@a' }, { provider: '@b', weight: -1 }] }] }, 'config.targets[0].targets[1].weight'],
    ['a condition naming no target', { strategy: { mode: 'conditional', conditions: [{ query: { model: 'x' }, then: 'nope' }] }, targets: [{ name: 'a', provider: '@a' }] }, 'config.strategy.conditions[0].then'],
    ['an unreadable condition field', { strategy: { mode: 'conditional', conditions: [{ query: { 'headers.x': 'y' }, then: 'a' }] }, targets: [{ name: 'a', provider: '@a' }] }, 'config.strategy.conditions[0].query.headers.x'],
    ['an unknown operator', { strategy: { mode: 'conditional', conditions: [{ query: { model: { $like: 'x' } }, then: 'a' }] }, targets: [{ name: 'a', provider: '@a' }] }, 'config.strategy.conditions[0].query.model'],
    ['a broken regex', { strategy: { mode: 'conditional', conditions: [{ query: { model: { $regex: '(' } }, then: 'a' }] }, targets: [{ name: 'a', provider: '@a' }] }, 'config.strategy.conditions[0].query.model.$regex'],
    ['a bad operand inside $or', { strategy: { mode: 'conditional', conditions: [{ query: { $or: [{ model: { $in: 'x' } }] }, then: 'a' }] }, targets: [{ name: 'a', provider: '@a' }] }, 'config.strategy.conditions[0].query.$or[0].model.$in'],
    ['conditions outside conditional mode', { strategy: { mode: 'fallback', default: 'a' }, targets: [{ name: 'a', provider: '@a' }] }, 'config.strategy.default'],
    ['on_status_codes outside fallback', { strategy: { mode: 'loadbalance', on_status_codes: [503] }, targets: [{ provider: '@a' }] }, 'config.strategy.on_status_codes'],
    ['loadbalance with no weight', { strategy: { mode: 'loadbalance' }, targets: [{ provider: '@a', weight: 0 }] }, 'config.targets'],
    ['duplicate names', { strategy: { mode: 'fallback' }, targets: [{ name: 'a', provider: '@a' }, { name: 'a', provider: '@b' }] }, 'config.targets[1].name'],
    ['a custom host that is not http', { provider: '@a', custom_host: 'file:///etc/passwd' }, 'config.custom_host'],
    ['a custom host with credentials', { provider: '@a', custom_host: 'https://user:pw@example.com' }, 'config.custom_host'],
    ['forwarding the caller credential', { provider: '@a', forward_headers: ['Authorization'] }, 'config.forward_headers[0]'],
    ['forwarding gateway headers', { provider: '@a', forward_headers: ['x-gateway-api-key'] }, 'config.forward_headers[0]'],
    ['a status code out of range', { strategy: { mode: 'fallback', on_status_codes: [99] }, targets: [{ provider: '@a' }] }, 'config.strategy.on_status_codes[0]'],
    ['backoff bounds inverted', { provider: '@a', retry: { attempts: 1, backoff_initial_ms: 500, backoff_max_ms: 100 } }, 'config.retry.backoff_max_ms'],
    ['an inline api key', { provider: '@a', api_key: 'sk-live' }, 'config.api_key'],
  ])('refuses %s, naming the path', (_name, value, path) => {
    expect(firstIssue(value).path).toBe(path)
  })

  it.each([
    ['(a+)+$', true],
    ['^(\\w+\\s?)*$', true],
    ['(a|aa)*', true],
    ['((ab)*c)+', true],
    ['(a)\\1', true],
    ['^gpt-4o', false],
    ['^(gpt|claude)-', false],
    ['(mini)?$', false],
    ['^(gpt|o1)?-', false],
    ['(a|b){2,}', true],
    ['(a+){10}', true],
    ['(a+){1}', false],
    ['[(+)]+', false],
    ['\\(a+\\)+', false],
  ])('refuses regexes that backtrack exponentially: %s -> %s', (pattern, refused) => {
    expect(backtracksBadly(pattern)).toBe(refused)
  })

  it('bounds how deep targets nest', () => {
    let node: Record<string, unknown> = { provider: '@a' }
    for (let depth = 0; depth < 7; depth++) node = { strategy: { mode: 'single' }, targets: [node] }
    expect(firstIssue(node).message).toMatch(/nest at most/)
  })

  it('never echoes an unknown field value (it may be a secret)', () => {
    const issue = firstIssue({ provider: '@a', api_key: 'sk-live-canary' })
    expect(issue.message).not.toContain('sk-live-canary')
  })
})
