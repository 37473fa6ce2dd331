/**
 * Usage-limit and rate-limit policies, guardrails, health and credential re-sealing over HTTP:
 * the spec's creation answer, every numeric and enum bound answered with 400 AB01 naming the
 * field while nothing is stored, the policy entities endpoint, guardrail check defaults.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseKeyring, generateEncryptionKey } from '../crypto/envelope.ts'
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../identity/scopes.ts'
import { TEST_ENCRYPTION_KEY } from '../store/testing.ts'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let wsA: string
let adminKey: string
let workspaceKey: string

const rows = async (table: string): Promise<string> => JSON.stringify(await h.db.query(`SELECT * FROM ${table} ORDER BY id`))
const base = { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }] }

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Pol A')).id
  adminKey = await h.key('organisation/service', { name: 'all admin', scopes: [...ALL_SCOPES] })
  workspaceKey = await h.key('workspace/service', { name: 'all ws', workspace_id: wsA, scopes: [...WORKSPACE_SCOPES] })
})
afterAll(() => h.close())

describe('rate-limit policies', () => {
  it('answers creation with exactly {id, object: "policy_usage_limits"} and serves list/get/update/delete', async () => {
    const created = await h.call('POST', '/v1/policies/rate-limits', adminKey, { name: 'Per key', ...base, type: 'requests', unit: 'rpw', value: 1000 })
    expect(created.statusCode).toBe(200)
    expect(Object.keys(created.json()).sort()).toEqual(['id', 'object'])
    expect(created.json().object).toBe('policy_usage_limits')
    const id = created.json().id
    expect((await h.call('GET', `/v1/policies/rate-limits/${id}`, adminKey)).json()).toMatchObject({ unit: 'rpw', value: 1000, type: 'requests', status: 'active' })
    expect((await h.call('PUT', `/v1/policies/rate-limits/${id}`, adminKey, { value: 5, unit: 'rpm' })).statusCode).toBe(200)
    const listed = (await h.call('GET', '/v1/policies/rate-limits?unit=rpm', adminKey)).json()
    expect(listed).toMatchObject({ object: 'list', total: 1, data: [{ id, value: 5 }] })
    expect((await h.call('DELETE', `/v1/policies/rate-limits/${id}`, adminKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/policies/rate-limits/${id}`, adminKey)).statusCode).toBe(404)
  })

  it('answers every bound with 400 AB01 naming the field and stores nothing', async () => {
    const before = await rows('policies')
    const valid = { ...base, type: 'requests', unit: 'rpm', value: 10 }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, name: 'n'.repeat(256) }, 'name'],
      [{ ...valid, conditions: [] }, 'conditions'],
      [{ ...valid, group_by: [] }, 'group_by'],
      [{ ...valid, conditions: [{ key: 'colour', value: 'x' }] }, 'conditions[0].key'],
      [{ ...valid, type: 'cost' }, 'type'],
      [{ ...valid, unit: 'rps' }, 'unit'],
      [{ ...valid, value: -1 }, 'value'],
      [{ ...valid, value: 1.5 }, 'value'],
      [{ ...valid, value: 'ten' }, 'value'],
      [{ ...valid, organisation_id: 'another-org' }, 'organisation_id'],
      [{ ...valid, workspace_id: 'nope' }, 'workspace_id'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('POST', '/v1/policies/rate-limits', adminKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect(await rows('policies')).toEqual(before)
  })
})

describe('usage-limit policies', () => {
  it('creates, computes the next reset, archives on delete, lists entities and resets usage', async () => {
    const keyId = (await h.store.apiKeys.list(h.orgId, {}, 0, 100)).data.find((k) => k.workspaceId === wsA)!.id
    const created = await h.call('POST', '/v1/policies/usage-limits', workspaceKey, {
      name: 'Budget', conditions: [{ key: 'api_key', value: keyId }, { key: 'workspace_id', value: wsA }], group_by: [{ key: 'api_key' }],
      type: 'cost', credit_limit: 100, alert_threshold: 80, periodic_reset: 'monthly',
    })
    expect(created.json()).toEqual({ id: expect.any(String), object: 'policy_usage_limits' })
    const id = created.json().id
    expect((await h.call('GET', `/v1/policies/usage-limits/${id}`, workspaceKey)).json()).toMatchObject({
      workspace_id: wsA, credit_limit: 100, alert_threshold: 80, next_usage_reset_at: '2030-02-01T00:00:00.000Z', object: 'policy_usage_limits',
    })
    await h.db.query("INSERT INTO policy_usage (policy_id, value_key, current_usage, status) VALUES ($1, $2, 42, 'exhausted')", [id, keyId])
    const entities = (await h.call('GET', `/v1/policies/usage-limits/${id}/entities`, workspaceKey)).json()
    expect(entities.data).toEqual(expect.arrayContaining([
      expect.objectContaining({ entity_type: 'api_key', id: keyId, current_usage: 42, usage_status: 'exhausted' }),
      expect.objectContaining({ entity_type: 'workspace', id: wsA }),
    ]))
    expect((await h.call('PUT', `/v1/policies/usage-limits/${id}/entities/${keyId}/reset`, workspaceKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/policies/usage-limits/${id}/entities`, workspaceKey)).json().data[0]).toMatchObject({ current_usage: 0, usage_status: 'active' })
    expect((await h.call('PUT', `/v1/policies/usage-limits/${id}/entities/unknown/reset`, workspaceKey)).statusCode).toBe(404)
    expect((await h.call('PUT', `/v1/policies/usage-limits/${id}`, workspaceKey, { alert_threshold: 100 })).json().error).toMatchObject({ code: 'AB01', param: 'alert_threshold' })
    expect((await h.call('DELETE', `/v1/policies/usage-limits/${id}`, workspaceKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/policies/usage-limits/${id}`, workspaceKey)).json().status).toBe('archived')
    expect((await h.call('GET', '/v1/policies/usage-limits', workspaceKey)).json().total).toBe(0)
    expect((await h.call('GET', '/v1/policies/usage-limits?status=archived', workspaceKey)).json().total).toBe(1)
    // Organisation-wide policies are for organisation-level principals.
    expect((await h.call('GET', `/v1/policies/usage-limits/${id}`, adminKey)).statusCode).toBe(200)
  })

  it('answers every bound with 400 AB01 naming the field and stores nothing', async () => {
    const before = await rows('policies')
    const valid = { ...base, type: 'tokens', credit_limit: 1000 }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, type: 'requests' }, 'type'],
      [{ ...valid, credit_limit: -1 }, 'credit_limit'],
      [{ ...valid, alert_threshold: 1000 }, 'alert_threshold'],
      [{ ...valid, periodic_reset: 'daily' }, 'periodic_reset'],
      [{ ...valid, periodic_reset_days: 0 }, 'periodic_reset_days'],
      [{ ...valid, periodic_reset_days: 366 }, 'periodic_reset_days'],
      [{ ...valid, periodic_reset: 'weekly', periodic_reset_days: 7 }, 'periodic_reset_days'],
      [{ ...valid, group_by: [{ key: 'metadata.' }] }, 'group_by[0].key'],
      [{ ...valid, name: '' }, 'name'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('POST', '/v1/policies/usage-limits', adminKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect(await rows('policies')).toEqual(before)
    const noPolicies = await h.key('workspace/service', { name: 'no pol', workspace_id: wsA, scopes: ['configs.list'] })
    expect((await h.call('POST', '/v1/policies/usage-limits', noPolicies, valid)).statusCode).toBe(403)
  })
})

describe('guardrails', () => {
  it('stores checks validated and defaulted, versions updates', async () => {
    const created = await h.call('POST', '/v1/guardrails', workspaceKey, {
      name: 'Input checks',
      checks: [
        { id: 'default.requiredMetadataKeyPairs', parameters: { metadataPairs: { team: 'search' } } },
        { id: 'default.inlineImageUrls' },
        { id: 'patronus.pii', parameters: { policyId: 'pol-1', endpoint: 'https://partner.example/verdict' } },
        { id: 'default.requestParamsCheck', parameters: { params: { blockedKeys: ['logit_bias'] }, tools: { blockedFunctionNames: ['rm'] } } },
        { id: 'default.addPrefix', parameters: { prefix: 'Be brief. ' } },
        { id: 'default.allowedRequestTypes', parameters: { allowedTypes: ['chatComplete', 'embed'] } },
      ],
      actions: { deny: true },
    })
    expect(created.statusCode).toBe(200)
    const { id, slug, version_id: v1 } = created.json()
    expect(slug).toMatch(/^pg-inputc-[0-9a-f]{6}$/)
    const stored = (await h.call('GET', `/v1/guardrails/${slug}`, workspaceKey)).json()
    expect(stored.checks[0].parameters).toEqual({ metadataPairs: { team: 'search' }, operator: 'all' })
    expect(stored.checks[1].parameters).toEqual({ maxSizeBytes: 20_971_520, timeoutMs: 30_000, failOnError: false })
    expect(stored.checks[2].parameters).toEqual({ policyId: 'pol-1', endpoint: 'https://partner.example/verdict', timeout: 10_000, failOnError: false })
    expect(stored.checks[3].parameters).toEqual({ params: { blockedKeys: ['logit_bias'] }, tools: { blockedFunctionNames: ['rm'] } })
    expect(stored.checks[4].parameters).toMatchObject({ prefix: 'Be brief. ', applyToRole: 'user', addToExisting: true })
    expect(stored.actions).toMatchObject({ deny: true, async: false, on_fail: { feedback: { value: -5, weight: 1 } } })
    const updated = (await h.call('PUT', `/v1/guardrails/${id}`, workspaceKey, { actions: { deny: false } })).json()
    expect(updated.version_id).not.toBe(v1)
    expect((await h.call('GET', `/v1/guardrails/${id}`, workspaceKey)).json().version).toBe(2)
    expect((await h.call('GET', '/v1/guardrails', workspaceKey)).json().total).toBe(1)
    expect((await h.call('DELETE', `/v1/guardrails/${id}`, workspaceKey)).statusCode).toBe(200)
  })

  it('answers every bound with 400 AB01 naming the field and stores nothing', async () => {
    const before = await rows('guardrails')
    const check = (id: string, parameters: Record<string, unknown>) => ({ name: 'g', checks: [{ id, parameters }] })
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'g', checks: [] }, 'checks'],
      [check('default.nope', {}), 'checks[0].id'],
      [check('default.inlineImageUrls', { maxSizeBytes: 0 }), 'checks[0].parameters.maxSizeBytes'],
      [check('default.inlineImageUrls', { timeoutMs: 120_001 }), 'checks[0].parameters.timeoutMs'],
      [check('default.inlineImageUrls', { failOnError: 'yes' }), 'checks[0].parameters.failOnError'],
      [check('patronus.pii', { policyId: 'p', endpoint: 'https://partner.example/v', timeout: 0 }), 'checks[0].parameters.timeout'],
      [check('patronus.pii', { endpoint: 'https://partner.example/v' }), 'checks[0].parameters.policyId'],
      [check('default.regexMatch', { rule: '(a)\\1' }), 'checks[0].parameters.rule'],
      [check('default.webhook', { webhookURL: 'https://hooks.example/v', signingSecret: 'short' }), 'checks[0].parameters.signingSecret'],
      [{ ...check('default.isAllLowerCase', {}), actions: { hold_back: { mode: 'later' } } }, 'actions.hold_back.mode'],
      [check('default.requiredMetadataKeyPairs', { metadataPairs: {} }), 'checks[0].parameters.metadataPairs'],
      [check('default.requiredMetadataKeyPairs', { metadataPairs: { a: 'b' }, operator: 'some' }), 'checks[0].parameters.operator'],
      [check('default.allowedRequestTypes', { allowedTypes: ['teleport'] }), 'checks[0].parameters.allowedTypes[0]'],
      [check('default.allowedRequestTypes', { allowedTypes: ['embed'], blockedTypes: ['embed'] }), 'checks[0].parameters.allowedTypes'],
      [check('default.addPrefix', { prefix: 'x', applyToRole: 'tool' }), 'checks[0].parameters.applyToRole'],
      [check('default.requestParamsCheck', {}), 'checks[0].parameters.tools'],
      [check('default.requestParamsCheck', { params: { values: { temperature: { allowedValues: [] } } } }), 'checks[0].parameters.params.values.temperature.allowedValues'],
      [check('default.regexMatch', { rule: 'a', extra: 1 }), 'checks[0].parameters.extra'],
      [{ ...check('default.isAllLowerCase', {}), actions: { deny: true, async: true } }, 'actions.async'],
      [{ ...check('default.isAllLowerCase', {}), actions: { on_fail: { feedback: { value: 11 } } } }, 'actions.on_fail.feedback.value'],
      [{ ...check('default.isAllLowerCase', {}), hooks: ['duringRequestHook'] }, 'hooks[0]'],
      [{ ...check('default.isAllLowerCase', {}), name: 'n'.repeat(256) }, 'name'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('POST', '/v1/guardrails', workspaceKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect(await rows('guardrails')).toEqual(before)
    // Organisation guardrails need an organisation-level principal.
    expect((await h.call('POST', '/v1/guardrails', adminKey, check('default.isAllLowerCase', {}))).statusCode).toBe(200)
    const readOnly = await h.key('workspace/service', { name: 'gr ro', workspace_id: wsA, scopes: ['guardrails.list'] })
    expect((await h.call('POST', '/v1/guardrails', readOnly, check('default.isAllLowerCase', {}))).statusCode).toBe(403)
  })
})

describe('health', () => {
  it('answers unauthenticated with the control plane service identifier', async () => {
    const response = await h.call('GET', '/v1/health', null)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ status: 'ok', service: 'gatehouse-control-plane' })
  })

  it('answers 503 with Retry-After when the store is down', async () => {
    const down = await createHarness()
    await down.store.close()
    const response = await down.call('GET', '/v1/health', null)
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('2')
    expect(response.json()).toMatchObject({ status: 'unavailable', service: 'gatehouse-control-plane' })
    await down.close()
  })
})

describe('credential re-sealing', () => {
  it('re-seals rows still under an old key once a new primary key is configured', async () => {
    await h.call('POST', '/v1/integrations', adminKey, { name: 'Reseal', ai_provider_id: 'openai', slug: 'reseal', key: 'sk-reseal-1234567890', create_default_provider: false })
    await h.call('POST', '/v1/providers', adminKey, { name: 'Reseal VK', provider: 'openai', key: 'sk-vk-reseal-1234567890' })
    const oldKeyId = parseKeyring(TEST_ENCRYPTION_KEY).primaryKeyId
    const status = (await h.call('GET', '/v1/admin/encryption', adminKey)).json()
    expect(status).toMatchObject({ primary_key_id: oldKeyId, stale: { providers: 0, integrations: 0 } })
    // Restart with a new primary key in front of the old one: old rows open, new writes use the new key.
    const rotated = `next:${generateEncryptionKey()},${TEST_ENCRYPTION_KEY}`
    const { storeOnDatabase } = await import('../store/index.ts')
    const store = await storeOnDatabase(h.db, { encryptionKey: rotated })
    const before = await store.credentials.status()
    expect(before.primaryKeyId).toBe('next')
    expect(before.stale.integrations).toBeGreaterThan(0)
    const report = await store.credentials.reseal()
    expect(report.resealed.integrations).toBe(before.stale.integrations)
    expect(report.stale).toEqual({ providers: 0, integrations: 0, mcp_integrations: 0, agent_integrations: 0 })
    const integration = (await store.integrations.get(h.orgId, 'reseal'))!
    expect(integration.credentialsKeyId).toBe('next')
    // Only the new key is needed from now on.
    const newOnly = await storeOnDatabase(h.db, { encryptionKey: rotated.split(',')[0]! })
    expect(await newOnly.integrations.decryptedCredentials(h.orgId, integration.id)).toEqual({ apiKey: 'sk-reseal-1234567890' })
    expect((await store.credentials.reseal()).resealed).toEqual({ providers: 0, integrations: 0, mcp_integrations: 0, agent_integrations: 0 })
    await newOnly.changes.stop()
    await store.changes.stop()
    // Workspace keys may not rotate encryption.
    expect((await h.call('POST', '/v1/admin/encryption/reseal', workspaceKey)).statusCode).toBe(403)
  })
})
