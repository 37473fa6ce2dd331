import { describe, expect, it } from 'vitest'
import { validateConfig, type ConfigNode } from '../snapshot/config-schema.ts'
import { leavesOf, mapTargets, planConfig, type PlanGroup, type PlanNode, type ProviderRef } from './plan.ts'
import { noRetries } from './retry.ts'

function plan(config: ConfigNode): PlanNode<ProviderRef> {
  const validation = validateConfig(config)
  if (!validation.ok) throw new Error(JSON.stringify(validation.issues))
  return planConfig(validation.config)
}

describe('plan', () => {
  it('a bare provider is one leaf at `config` with the defaults', () => {
    const root = plan({ provider: '@openai' })
    expect(root).toMatchObject({ kind: 'leaf', path: 'config', weight: 1, target: { name: 'openai', field: 'provider' } })
    if (root.kind !== 'leaf') throw new Error('leaf expected')
    expect(root.settings.retry).toBe(noRetries)
    expect(root.settings.requestTimeoutMs).toBeNull()
  })

  it('children inherit and override their parent settings', () => {
    const root = plan({
      strategy: { mode: 'fallback' },
      override_params: { model: 'gpt-4o', temperature: 0 },
      retry: { attempts: 2, on_status_codes: [503] },
      request_timeout: 5000,
      custom_host: 'http://127.0.0.1:9000/v1',
      forward_headers: ['X-Team'],
      targets: [
        { provider: '@a' },
        {
          strategy: { mode: 'loadbalance' },
          override_params: { model: 'claude' },
          request_timeout: 1000,
          targets: [{ virtual_key: 'b', retry: { attempts: 0 }, override_params: { max_tokens: 10 }, weight: 3 }],
        },
      ],
    })
    const [a, b] = leavesOf(root)
    expect(a!.path).toBe('config.targets[0]')
    expect(a!.settings.overrideParams).toEqual({ model: 'gpt-4o', temperature: 0 })
    expect(a!.settings.retry.attempts).toBe(2)
    expect([...a!.settings.retry.onStatusCodes]).toEqual([503])
    expect(a!.settings.requestTimeoutMs).toBe(5000)
    expect(a!.settings.customHost?.href).toBe('http://127.0.0.1:9000/v1')
    expect(a!.settings.forwardHeaders).toEqual(['x-team'])

    expect(b!.path).toBe('config.targets[1].targets[0]')
    expect(b!.weight).toBe(3)
    expect(b!.target).toEqual({ name: 'b', field: 'virtual_key' })
    // Shallow merge down the chain; the nearest value wins.
    expect(b!.settings.overrideParams).toEqual({ model: 'claude', temperature: 0, max_tokens: 10 })
    // retry is replaced whole: no inherited status list.
    expect(b!.settings.retry.attempts).toBe(0)
    expect([...b!.settings.retry.onStatusCodes].sort()).toEqual([429, 500, 502, 503, 504])
    expect(b!.settings.requestTimeoutMs).toBe(1000)
    expect(b!.settings.customHost?.href).toBe('http://127.0.0.1:9000/v1')
  })

  it('compiles conditional rules to child indexes', () => {
    const root = plan({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.team': 'search' }, then: 'fast' }], default: 'cheap' },
      targets: [
        { name: 'cheap', provider: '@c' },
        { name: 'fast', provider: '@f' },
      ],
    }) as PlanGroup<ProviderRef>
    expect(root.rules[0]!.child).toBe(1)
    expect(root.defaultChild).toBe(0)
    expect(root.rules[0]!.matches({ metadata: { team: 'search' }, params: {} })).toBe(true)
  })

  it('maps targets without touching the plan', () => {
    const root = plan({ strategy: { mode: 'single' }, targets: [{ provider: '@a' }] })
    const mapped = mapTargets(root, (leaf) => leaf.target.name.toUpperCase())
    expect(leavesOf(mapped)[0]!.target).toBe('A')
    expect(leavesOf(root)[0]!.target).toEqual({ name: 'a', field: 'provider' })
  })
})
