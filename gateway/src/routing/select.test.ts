import { describe, expect, it } from 'vitest'
import { compileRuntime, type RuntimeConfig } from '../runtime/compile.ts'
import { gatewaySnapshot, SNAPSHOT_SCHEMA_VERSION, type GatewaySnapshotInput } from '../snapshot/schema.ts'
import type { Dispatcher } from 'undici'
import { bindPlan } from './bind.ts'
import { leavesOf } from './plan.ts'
import { selectConfig } from './select.ts'

const hash = (n: number): string => n.toString(16).padStart(64, '0')

function snapshot(change: (input: GatewaySnapshotInput) => void = () => undefined): GatewaySnapshotInput {
  const input: GatewaySnapshotInput = {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 1,
    producedAt: new Date(0).toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [
      { id: 'ws-a', slug: 'a', name: 'A', status: 'active' },
      { id: 'ws-b', slug: 'b', name: 'B', status: 'active' },
    ],
    apiKeys: [
      { id: 'key-a', hash: hash(1), type: 'workspace', subtype: 'service', workspaceId: 'ws-a', scopes: [], status: 'active' },
      { id: 'key-b', hash: hash(2), type: 'workspace', subtype: 'service', workspaceId: 'ws-b', scopes: [], status: 'active' },
    ],
    providers: [
      { id: 'p-openai', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'https://api.openai.example/v1', workspaceId: 'ws-a', models: ['gpt-4o', 'gpt-4o-mini'] },
      { id: 'p-shared', slug: 'shared', name: 'Shared', kind: 'openai', baseUrl: 'https://shared.example/v1', options: { allowedCustomHosts: 'https://models.example.org, *.corp.example', allowForwardHeaders: 'true' } },
    ],
    configs: [
      { id: 'cfg-org', slug: 'standard', config: { provider: '@shared' } },
      { id: 'cfg-a', slug: 'standard', workspaceId: 'ws-a', config: { provider: '@openai' } },
      { id: 'cfg-b', slug: 'private-b', workspaceId: 'ws-b', config: { provider: '@shared' } },
    ],
  }
  change(input)
  return input
}

const noPool = (): Dispatcher => ({ close: async () => undefined }) as unknown as Dispatcher

function compile(input: GatewaySnapshotInput): ReturnType<typeof compileRuntime> {
  return compileRuntime(gatewaySnapshot.parse(input), 'hash', noPool)
}

function runtime(change?: (input: GatewaySnapshotInput) => void): RuntimeConfig {
  const result = compile(snapshot(change))
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.runtime
}

const providerOf = (plan: ReturnType<typeof selectConfig>): string => (plan === null ? 'none' : (leavesOf(plan.plan)[0]!.target as { name: string }).name)

describe('selectConfig', () => {
  const rt = runtime()

  it('with no header and no default: direct routing', () => {
    expect(selectConfig(rt, 'ws-a', {}, null)).toBeNull()
  })

  it('an inline config', () => {
    expect(providerOf(selectConfig(rt, 'ws-a', { 'x-gateway-config': ' {"provider":"@openai"}' }, null))).toBe('openai')
  })

  it('plans an inline config once per distinct text', () => {
    const headers = { 'x-gateway-config': '{"provider":"@shared","retry":{"attempts":1}}' }
    expect(selectConfig(rt, 'ws-a', headers, null)).toBe(selectConfig(rt, 'ws-b', headers, null))
  })

  it('an invalid inline config is a 400 naming the path', () => {
    expect(() => selectConfig(rt, 'ws-a', { 'x-gateway-config': '{"provider":"@openai","retry":{"attempts":-1}}' }, null)).toThrow(
      expect.objectContaining({ code: 'invalid_config', param: 'config.retry.attempts' }),
    )
  })

  it('a saved config by id, and by slug with the workspace one first', () => {
    expect(providerOf(selectConfig(rt, 'ws-a', { 'x-gateway-config': 'cfg-org' }, null))).toBe('shared')
    expect(providerOf(selectConfig(rt, 'ws-a', { 'x-gateway-config': 'standard' }, null))).toBe('openai')
    expect(providerOf(selectConfig(rt, 'ws-b', { 'x-gateway-config': 'standard' }, null))).toBe('shared')
  })

  it("another workspace's config is not found", () => {
    expect(() => selectConfig(rt, 'ws-a', { 'x-gateway-config': 'cfg-b' }, null)).toThrow(expect.objectContaining({ code: 'config_not_found', status: 404 }))
    expect(() => selectConfig(rt, 'ws-a', { 'x-gateway-config': 'private-b' }, null)).toThrow(expect.objectContaining({ code: 'config_not_found' }))
  })
})

describe('default configs at compile time', () => {
  it("a key's default wins over its workspace's", () => {
    const rt = runtime((input) => {
      input.workspaces[0]!.defaultConfigId = 'cfg-org'
      input.apiKeys[0]!.defaultConfigId = 'cfg-a'
    })
    expect(rt.keysByHash.get(hash(1))?.defaultConfig?.record.id).toBe('cfg-a')
  })

  it("a key without one takes its workspace's", () => {
    const rt = runtime((input) => {
      input.workspaces[1]!.defaultConfigId = 'cfg-b'
    })
    expect(rt.keysByHash.get(hash(2))?.defaultConfig?.record.id).toBe('cfg-b')
    expect(rt.keysByHash.get(hash(1))?.defaultConfig).toBeNull()
  })

  it('a default naming a missing or foreign config fails the snapshot with the path', () => {
    const result = compile(snapshot((input) => {
      input.apiKeys[0]!.defaultConfigId = 'cfg-b'
    }))
    expect(result).toMatchObject({ ok: false, problems: [{ path: 'apiKeys.0.defaultConfigId' }] })
  })

  it('an invalid saved config fails the snapshot with the path of the bad field', () => {
    const result = compile(snapshot((input) => {
      input.configs![1] = { id: 'cfg-a', slug: 'x', config: { strategy: { mode: 'fallback' }, targets: [{ provider: '@a', wieght: 2 }] } }
    }))
    expect(result).toMatchObject({ ok: false, problems: [{ path: 'configs.1.config.targets.0.wieght', message: 'unknown field' }] })
  })
})

describe('bindPlan', () => {
  const rt = runtime()
  const plan = (raw: unknown) => selectConfig(rt, 'ws-a', { 'x-gateway-config': JSON.stringify(raw) }, null)!
  const bind = (raw: unknown, model = 'gpt-4o', headers: Record<string, string> = {}) => bindPlan(plan(raw).plan, { providers: rt, workspaceId: 'ws-a', model, headers })

  it('resolves providers by @slug or virtual_key (slug or id) and the model, without an @slug/ prefix', () => {
    const bound = bind({ strategy: { mode: 'fallback' }, targets: [{ provider: '@openai' }, { virtual_key: 'p-shared' }] }, '@elsewhere/gpt-4o-mini')
    expect(leavesOf(bound).map((leaf) => [leaf.target.route.provider.record.id, leaf.target.route.upstreamModel, leaf.target.healthKey])).toEqual([
      ['p-openai', 'gpt-4o-mini', 'p-openai'],
      ['p-shared', 'gpt-4o-mini', 'p-shared'],
    ])
  })

  it('override_params.model picks the model, and the allowlist applies to it', () => {
    expect(leavesOf(bind({ provider: '@shared', override_params: { model: 'any-model' } }))[0]!.target.route.upstreamModel).toBe('any-model')
    expect(() => bind({ provider: '@openai', override_params: { model: 'o3' } })).toThrow(expect.objectContaining({ code: 'model_not_found' }))
  })

  it('a provider the workspace cannot see is a 404 naming the field', () => {
    const other = selectConfig(rt, 'ws-b', { 'x-gateway-config': '{"strategy":{"mode":"single"},"targets":[{"virtual_key":"openai"}]}' }, null)!
    expect(() => bindPlan(other.plan, { providers: rt, workspaceId: 'ws-b', model: 'gpt-4o', headers: {} })).toThrow(
      expect.objectContaining({ code: 'provider_not_found', param: 'config.targets[0].virtual_key' }),
    )
  })

  it('a custom host keeps the credential and gets its own breaker', () => {
    const [leaf] = leavesOf(bind({ provider: '@shared', custom_host: 'https://models.example.org/v2' }))
    expect(leaf!.target.route.provider.endpoint.baseUrl.href).toBe('https://models.example.org/v2')
    expect(leaf!.target.route.provider.endpoint.credentials).toBe(rt.providers.byId('p-shared')!.endpoint.credentials)
    expect(leaf!.target.healthKey).toBe('p-shared https://models.example.org')
  })

  it('forwards only the named headers that the request has', () => {
    const [leaf] = leavesOf(bind({ provider: '@shared', forward_headers: ['X-Team', 'x-absent'] }, 'gpt-4o', { 'x-team': 'search', 'x-other': '1' }))
    expect(leaf!.target.forwardedHeaders).toEqual({ 'x-team': 'search' })
  })

  it('refuses custom hosts and forwarded headers the provider does not allow', () => {
    expect(() => bind({ provider: '@openai', custom_host: 'https://x.example' })).toThrow(expect.objectContaining({ code: 'custom_host_not_allowed', param: 'config.custom_host' }))
    // The stored credential goes only to hosts the provider's owner listed.
    expect(() => bind({ provider: '@shared', custom_host: 'https://attacker.example/v1' })).toThrow(expect.objectContaining({ code: 'custom_host_not_allowed', param: 'config.custom_host' }))
    expect(() => bind({ provider: '@shared', custom_host: 'http://models.example.org/v1' })).toThrow(expect.objectContaining({ code: 'custom_host_not_allowed' }))
    expect(leavesOf(bind({ provider: '@shared', custom_host: 'https://eu.corp.example/v1' }))[0]!.target.route.provider.endpoint.baseUrl.host).toBe('eu.corp.example')
    expect(() => bind({ provider: '@openai', forward_headers: ['x-team'] })).toThrow(expect.objectContaining({ code: 'forward_headers_not_allowed' }))
  })
})
