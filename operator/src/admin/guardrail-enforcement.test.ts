/**
 * Guardrails reach the gateway: the organisation's guardrails (GET/PUT /v1/organisation/guardrails),
 * workspace default guardrails and every active guardrail compile into the snapshot; admin answers
 * of guardrails and limit policies say whether this gateway release enforces them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isEnforced } from '@gatehouse/gateway/snapshot'
import { compileSnapshot } from '../compile/snapshot.ts'
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../identity/scopes.ts'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let wsA: string
let adminKey: string
let workspaceKey: string

const rows = async (): Promise<string> => JSON.stringify(await h.db.query('SELECT * FROM organisation_guardrails ORDER BY hook, position'))
const create = async (key: string, body: Record<string, unknown>) => {
  const response = await h.call('POST', '/v1/guardrails', key, body)
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { id: string; slug: string }
}

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Guard A')).id
  adminKey = await h.key('organisation/service', { name: 'all admin', scopes: [...ALL_SCOPES] })
  workspaceKey = await h.key('workspace/service', { name: 'all ws', workspace_id: wsA, scopes: [...WORKSPACE_SCOPES] })
})
afterAll(() => h.close())

describe('organisation guardrails', () => {
  it('lists organisation guardrails as input and output guardrails, once each, in order', async () => {
    const pii = await create(adminKey, { name: 'Org PII', slug: 'org-pii', checks: [{ id: 'default.contains', parameters: { words: ['ssn'], operator: 'none' } }], actions: { deny: true } })
    const json = await create(adminKey, { name: 'Org JSON', slug: 'org-json', checks: [{ id: 'default.jsonKeys', parameters: { keys: ['a'], operator: 'all' } }] })
    const put = await h.call('PUT', '/v1/organisation/guardrails', adminKey, { input_guardrails: ['org-pii', pii.id], output_guardrails: [json.id, 'org-pii'] })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json()).toMatchObject({
      object: 'organisation-guardrails',
      input_guardrails: [{ id: pii.id, slug: 'org-pii' }],
      output_guardrails: [{ id: json.id }, { id: pii.id }],
      enforcement: { enforced: isEnforced('Guardrail') },
    })
    expect((await h.call('GET', '/v1/admin/organisation/guardrails', adminKey)).json().input_guardrails).toHaveLength(1)
    // Only the lists given change.
    await h.call('PUT', '/v1/organisation/guardrails', adminKey, { output_guardrails: [] })
    expect((await h.call('GET', '/v1/organisation/guardrails', adminKey)).json()).toMatchObject({ input_guardrails: [{ id: pii.id }], output_guardrails: [] })
  })

  it('refuses workspace guardrails, unknown ones and workspace credentials, changing nothing', async () => {
    const local = await create(workspaceKey, { name: 'Local', checks: [{ id: 'default.isAllLowerCase' }] })
    const before = await rows()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ input_guardrails: [local.slug] }, 'input_guardrails[0]'],
      [{ output_guardrails: ['org-pii', 'missing'] }, 'output_guardrails[1]'],
      [{ input_guardrails: 'org-pii' }, 'input_guardrails'],
      [{ extra: [] }, '(body)'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('PUT', '/v1/organisation/guardrails', adminKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect((await h.call('PUT', '/v1/organisation/guardrails', workspaceKey, { input_guardrails: [] })).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/organisation/guardrails', workspaceKey)).statusCode).toBe(403)
    expect(await rows()).toEqual(before)
  })

  it('a deleted guardrail leaves the list', async () => {
    const gone = await create(adminKey, { name: 'Gone', checks: [{ id: 'default.isAllLowerCase' }] })
    await h.call('PUT', '/v1/organisation/guardrails', adminKey, { output_guardrails: [gone.id] })
    expect((await h.call('DELETE', `/v1/guardrails/${gone.id}`, adminKey)).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/organisation/guardrails', adminKey)).json().output_guardrails).toEqual([])
  })
})

describe('organisation guardrail exclusions', () => {
  const exclusionRows = async (): Promise<string> => JSON.stringify(await h.db.query('SELECT organization_id, workspace_id FROM organisation_guardrail_exclusions ORDER BY workspace_id'))

  it('lists and replaces the exempted workspaces (ids or slugs, once each), audited, and carries them in the snapshot', async () => {
    const wsB = await h.workspace('Guard B')
    expect((await h.call('GET', '/v1/organisation/guardrails/exclusions', adminKey)).json()).toMatchObject({ object: 'organisation-guardrail-exclusions', workspaces: [], total: 0 })
    const put = await h.call('PUT', '/v1/organisation/guardrails/exclusions', adminKey, { workspaces: [wsB.slug, wsB.id] })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json()).toMatchObject({ workspaces: [{ id: wsB.id, slug: wsB.slug, name: 'Guard B' }], total: 1 })
    expect((await h.call('GET', '/v1/admin/organisation/guardrails/exclusions', adminKey)).json().workspaces).toEqual([{ id: wsB.id, slug: wsB.slug, name: 'Guard B' }])
    const audited = (await h.store.audit.list(h.orgId, {}, 0, 100)).data.filter((r) => r.action === 'organisation_exclusions.update')
    expect(audited).toEqual([expect.objectContaining({ resourceType: 'organisation', responseStatusCode: 200, details: expect.objectContaining({ added: [wsB.id], removed: [] }) })])
    // The snapshot's organisation entry names the exempted workspace; the gateway leaves the organisation's guardrails off its requests.
    await h.call('PUT', '/v1/organisation/guardrails', adminKey, { input_guardrails: ['org-pii'] })
    const snapshot = await compileSnapshot(h.store, { generation: 1 })
    expect(snapshot.guardrailDefaults.find((entry) => entry.workspaceId === null)).toMatchObject({ excludedWorkspaceIds: [wsB.id] })
    // Replacing with an empty list removes the exemption.
    expect((await h.call('PUT', '/v1/organisation/guardrails/exclusions', adminKey, { workspaces: [] })).json().workspaces).toEqual([])
    expect(await exclusionRows()).toBe('[]')
    await h.call('PUT', '/v1/organisation/guardrails/exclusions', adminKey, { workspaces: [wsB.id] })
  })

  it('refuses bad input and credentials without the exclusion scopes, changing nothing', async () => {
    const before = await exclusionRows()
    expect(before).not.toBe('[]')
    const cases: Array<[unknown, string]> = [
      [{ workspaces: ['no-such-workspace'] }, 'workspaces[0]'],
      [{ workspaces: [wsA, ''] }, 'workspaces[1]'],
      [{ workspaces: wsA }, 'workspaces'],
      [{}, 'workspaces'],
      [{ workspaces: [], extra: true }, '(body)'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('PUT', '/v1/organisation/guardrails/exclusions', adminKey, body as Record<string, unknown>)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    // Organisation guardrail scopes alone do not reach exclusions; list and update are separate scopes.
    const guardrailsOnly = await h.key('organisation/service', { name: 'org guardrails only', scopes: ['organisation_guardrails.read', 'organisation_guardrails.update', 'organisation_guardrails.list'] })
    const listOnly = await h.key('organisation/service', { name: 'exclusions list only', scopes: ['organisation_exclusions.list'] })
    expect((await h.call('GET', '/v1/organisation/guardrails/exclusions', guardrailsOnly)).statusCode).toBe(403)
    expect((await h.call('PUT', '/v1/organisation/guardrails/exclusions', guardrailsOnly, { workspaces: [] })).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/organisation/guardrails/exclusions', listOnly)).statusCode).toBe(200)
    expect((await h.call('PUT', '/v1/organisation/guardrails/exclusions', listOnly, { workspaces: [] })).statusCode).toBe(403)
    expect((await h.call('PUT', '/v1/organisation/guardrails/exclusions', workspaceKey, { workspaces: [] })).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/organisation/guardrails/exclusions', workspaceKey)).statusCode).toBe(403)
    expect(await exclusionRows()).toBe(before)
    await h.call('PUT', '/v1/organisation/guardrails/exclusions', adminKey, { workspaces: [] })
  })
})

describe('guardrails in the snapshot', () => {
  it('carries every active guardrail with hold-back, the organisation\'s and the workspaces\' defaults', async () => {
    const held = await create(workspaceKey, {
      name: 'Held',
      slug: 'held',
      checks: [{ id: 'default.regexMatch', parameters: { rule: 'secret', not: true } }, { id: 'default.wordCount', parameters: { maxWords: 10 }, is_enabled: false }],
      actions: { deny: true, hold_back: { mode: 'window', window_chars: 40 } },
    })
    const put = await h.call('PUT', `/v1/admin/workspaces/${wsA}`, adminKey, { defaults: { input_guardrails: ['held', 'org-pii', 'nope'], output_guardrails: [held.id] } })
    expect(put.statusCode, put.body).toBe(200)
    const problems: Array<{ path: string; message: string }> = []
    const snapshot = await compileSnapshot(h.store, { generation: 1, onProblem: (problem) => problems.push(problem) })
    const compiled = snapshot.guardrails.find((g) => g.id === held.id)!
    expect(compiled).toMatchObject({
      slug: 'held',
      workspaceId: wsA,
      holdBack: { mode: 'window', windowChars: 40 },
      actions: { deny: true },
      checks: [{ id: 'default.regexMatch', parameters: { rule: 'secret', not: true }, isEnabled: true }, { id: 'default.wordCount', isEnabled: false }],
    })
    const orgPii = snapshot.guardrails.find((g) => g.slug === 'org-pii')!
    expect(orgPii.holdBack).toEqual({ mode: 'none', windowChars: 256 })
    expect(snapshot.guardrailDefaults).toEqual(expect.arrayContaining([
      { workspaceId: null, input: [orgPii.id], output: [], excludedWorkspaceIds: [] },
      { workspaceId: wsA, input: [held.id, orgPii.id], output: [held.id] },
    ]))
    expect(problems).toEqual([expect.objectContaining({ message: expect.stringContaining("no active guardrail 'nope'") })])
  })
})

describe('enforcement in admin answers', () => {
  it('guardrails and limit policies say whether the gateway enforces their kind, and why not', async () => {
    const guardrail = (await h.call('GET', '/v1/guardrails/org-pii', adminKey)).json()
    expect(guardrail.enforcement).toEqual(isEnforced('Guardrail') ? { enforced: true } : { enforced: false, reason: 'NotEnforced', message: expect.any(String) })
    const base = { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }] }
    const rate = await h.call('POST', '/v1/policies/rate-limits', adminKey, { ...base, type: 'requests', unit: 'rpm', value: 10 })
    const rateView = (await h.call('GET', `/v1/policies/rate-limits/${rate.json().id}`, adminKey)).json()
    expect(rateView.enforcement).toEqual(isEnforced('RateLimitPolicy') ? { enforced: true } : { enforced: false, reason: 'NotEnforced', message: expect.stringContaining('RateLimitPolicy') })
    const usage = await h.call('POST', '/v1/policies/usage-limits', adminKey, { ...base, type: 'cost', credit_limit: 10 })
    expect((await h.call('GET', '/v1/policies/usage-limits', adminKey)).json().data.find((p: { id: string }) => p.id === usage.json().id).enforcement).toMatchObject({ enforced: isEnforced('UsageLimitPolicy') })
  })
})
