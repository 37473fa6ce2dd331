/**
 * Configs over HTTP: validated by the gateway's config schema, versioned on every write, scoped
 * like providers (admin key: any workspace; workspace key: its own), managed rows refused; and
 * deployments: production / non-production, config and workspace assignment, their own
 * deployments:* permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../identity/scopes.ts'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let wsA: string
let wsB: string
let adminKey: string
let workspaceKey: string

const rows = async (table: string): Promise<string> => JSON.stringify(await h.db.query(`SELECT * FROM ${table} ORDER BY id`))

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Cfg A')).id
  wsB = (await h.workspace('Cfg B')).id
  adminKey = await h.key('organisation/service', { name: 'all admin', scopes: [...ALL_SCOPES] })
  workspaceKey = await h.key('workspace/service', { name: 'all ws', workspace_id: wsA, scopes: [...WORKSPACE_SCOPES] })
})
afterAll(() => h.close())

const fallback = { strategy: { mode: 'fallback' }, targets: [{ provider: '@openai' }, { provider: '@anthropic' }] }

describe('configs', () => {
  it('creates version 1, writes a new version on every update, lists and reads versions', async () => {
    const created = await h.call('POST', '/v1/configs', adminKey, { name: 'Prod routing', slug: 'prod-routing', config: fallback, workspace_id: wsA })
    expect(created.statusCode).toBe(200)
    const { id, version_id: v1 } = created.json().data
    expect(created.json()).toMatchObject({ success: true, slug: 'prod-routing' })
    const updated = await h.call('PUT', '/v1/configs/prod-routing', workspaceKey, { config: { ...fallback, retry: { attempts: 2 } } })
    expect(updated.json()).toMatchObject({ success: true, data: { version: 2 } })
    await h.call('PUT', '/v1/configs/prod-routing', workspaceKey, { name: 'Renamed' })
    const current = (await h.call('GET', '/v1/configs/prod-routing', workspaceKey)).json()
    expect(current).toMatchObject({ success: true, data: { id, name: 'Renamed', version: 3, config: { retry: { attempts: 2 } } } })
    const versions = (await h.call('GET', '/v1/configs/prod-routing/versions', workspaceKey)).json()
    expect(versions).toMatchObject({ object: 'list', total: 3 })
    expect(versions.data.map((v: { version: number }) => v.version)).toEqual([3, 2, 1])
    expect(JSON.parse(versions.data[2].config)).toEqual(fallback)
    const first = (await h.call('GET', `/v1/configs/prod-routing/versions/${v1}`, workspaceKey)).json()
    expect(first).toMatchObject({ version: 1, version_id: v1, config: fallback, name: 'Prod routing' })
    expect((await h.call('GET', '/v1/configs/prod-routing/versions/2', workspaceKey)).json().version).toBe(2)
    expect((await h.call('GET', '/v1/configs/prod-routing/versions/99', workspaceKey)).statusCode).toBe(404)
    expect((await h.call('POST', '/v1/configs', adminKey, { name: 'Dup', slug: 'prod-routing', config: fallback, workspace_id: wsA })).statusCode).toBe(409)
  })

  it('answers an invalid routing config with 400 naming its path and stores nothing', async () => {
    const before = [await rows('configs'), await rows('config_versions')]
    const cases: Array<[unknown, string]> = [
      [{ strategy: { mode: 'roundrobin' }, targets: [{ provider: '@a' }] }, 'config.strategy.mode'],
      [{ ...fallback, retry: { attempts: 11 } }, 'config.retry.attempts'],
      [{ ...fallback, unknown_field: 1 }, 'config.unknown_field'],
    ]
    for (const [config, param] of cases) {
      const response = await h.call('POST', '/v1/configs', adminKey, { name: 'Bad', config })
      expect(response.statusCode, JSON.stringify(config)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    await h.call('POST', '/v1/configs', adminKey, { name: 'Good', slug: 'good', config: fallback })
    const afterGood = [await rows('configs'), await rows('config_versions')]
    for (const [body, param] of [
      [{ config: { ...fallback, retry: { attempts: -1 } } }, 'config.retry.attempts'],
      [{ name: 'x'.repeat(256) }, 'name'],
      [{ status: 'deleted' }, 'status'],
    ] as Array<[Record<string, unknown>, string]>) {
      const response = await h.call('PUT', '/v1/configs/good', adminKey, body)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    for (const [body, param] of [
      [{ name: 'n'.repeat(256), config: fallback }, 'name'],
      [{ name: 'ok', slug: 's'.repeat(256), config: fallback }, 'slug'],
      [{ name: 'ok', config: fallback, is_default: 2 }, 'is_default'],
      [{ name: 'ok', config: 'not an object' }, 'config'],
    ] as Array<[Record<string, unknown>, string]>) {
      const response = await h.call('POST', '/v1/configs', adminKey, body)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect([await rows('configs'), await rows('config_versions')]).toEqual(afterGood)
    expect(afterGood[0]).not.toEqual(before[0])
  })

  it('admin key: all workspaces; workspace key: its own only', async () => {
    expect((await h.call('POST', '/v1/configs', adminKey, { name: 'B cfg', slug: 'b-cfg', config: fallback, workspace_id: wsB })).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/configs', workspaceKey, { name: 'Into B', config: fallback, workspace_id: wsB })).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/configs/b-cfg', workspaceKey)).statusCode).toBe(404)
    expect((await h.call('GET', '/v1/configs/b-cfg', adminKey)).statusCode).toBe(200)
    const listed = (await h.call('GET', '/v1/configs', workspaceKey)).json().data
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.every((c: { workspace_id: string }) => c.workspace_id === wsA)).toBe(true)
    const member = await h.user('cfg-member@example.com', 'member', { id: wsA, role: 'member' })
    const memberKey = await h.key('workspace/user', { name: 'm', workspace_id: wsA, user_id: member, scopes: [...WORKSPACE_SCOPES] })
    expect((await h.call('GET', '/v1/configs', memberKey)).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/configs', memberKey, { name: 'Member', config: fallback })).statusCode).toBe(403)
  })

  it('refuses to edit a config managed by a resources file (409)', async () => {
    await h.store.configs.upsert({ organizationId: h.orgId, workspaceId: null, slug: 'from-file', name: 'File', config: fallback, managedBy: 'file' })
    const response = await h.call('PUT', '/v1/configs/from-file', adminKey, { name: 'x' })
    expect(response.statusCode).toBe(409)
    expect(response.json().error).toMatchObject({ code: 'AB07' })
    expect(response.json().error.message).toMatch(/managed by a resources file/)
    expect((await h.call('DELETE', '/v1/configs/from-file', adminKey)).statusCode).toBe(409)
  })
})

describe('deployments', () => {
  it('creates, lists with a type filter (either spelling), reads and updates; answers the spec spelling', async () => {
    await h.call('POST', '/v1/configs', adminKey, { name: 'Deploy cfg', slug: 'deploy-cfg', config: fallback })
    const prod = await h.call('POST', '/v1/deployments', adminKey, { name: 'EU prod', type: 'production', config: 'deploy-cfg', allowed_workspaces: [wsA] })
    expect(prod.statusCode).toBe(200)
    expect(prod.json()).toMatchObject({ slug: 'eu-prod', type: 'production', config: 'deploy-cfg', allow_all_workspaces: false, allowed_workspaces: [wsA], object: 'deployment' })
    const staging = await h.call('POST', '/v1/deployments', adminKey, { name: 'Staging', type: 'non_production' })
    expect(staging.json()).toMatchObject({ type: 'non-production', allow_all_workspaces: true })
    const types = async (filter: string) => (await h.call('GET', `/v1/deployments?type=${filter}`, adminKey)).json().data.map((d: { slug: string }) => d.slug)
    expect(await types('production')).toEqual(['eu-prod'])
    expect(await types('non-production')).toEqual(['staging'])
    expect(await types('non_production')).toEqual(['staging'])
    expect((await h.call('GET', '/v1/deployments/eu-prod', adminKey)).json().id).toBe(prod.json().id)
    const updated = await h.call('PUT', '/v1/deployments/eu-prod', adminKey, { allow_all_workspaces: true, type: 'non-production', config: null })
    expect(updated.json()).toMatchObject({ allow_all_workspaces: true, allowed_workspaces: [], type: 'non-production', config: null })
    expect((await h.call('DELETE', '/v1/deployments/staging', adminKey)).statusCode).toBe(200)
  })

  it('has its own permissions (deployments:* or deployments.*); workspace principals read those serving them', async () => {
    const readOnly = await h.key('organisation/service', { name: 'dep ro', scopes: ['deployments.read', 'deployments:list'] })
    expect((await h.call('GET', '/v1/deployments', readOnly)).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/deployments', readOnly, { name: 'nope' })).statusCode).toBe(403)
    const creator = await h.key('organisation/service', { name: 'dep rw', scopes: ['deployments.create', 'deployments:update', 'deployments:delete'] })
    const made = await h.call('POST', '/v1/deployments', creator, { name: 'Only B', allowed_workspaces: [wsB] })
    expect(made.statusCode).toBe(200)
    expect((await h.call('GET', '/v1/deployments/only-b', creator)).statusCode).toBe(403)
    expect((await h.call('PUT', '/v1/deployments/only-b', creator, { name: 'Only B!' })).statusCode).toBe(200)
    const noDeployments = await h.key('organisation/service', { name: 'no dep', scopes: ['configs.list'] })
    expect((await h.call('GET', '/v1/deployments', noDeployments)).statusCode).toBe(403)
    // A workspace key may read and list, never manage, and sees only deployments serving its workspace.
    expect((await h.call('POST', '/v1/deployments', workspaceKey, { name: 'ws dep' })).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/deployments/only-b', workspaceKey)).statusCode).toBe(404)
    const visible = (await h.call('GET', '/v1/deployments', workspaceKey)).json().data.map((d: { slug: string }) => d.slug)
    expect(visible).toContain('eu-prod')
    expect(visible).not.toContain('only-b')
    expect((await h.call('DELETE', '/v1/deployments/only-b', creator)).statusCode).toBe(200)
  })

  it('answers every bound with 400 AB01 and stores nothing; refuses managed deployments', async () => {
    const before = await rows('deployments')
    for (const [body, param] of [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: 'ok', slug: 'S' }, 'slug'],
      [{ name: 'ok', type: 'staging' }, 'type'],
      [{ name: 'ok', config: 'no-such-config' }, 'config'],
      [{ name: 'ok', allow_all_workspaces: true, allowed_workspaces: [wsA] }, 'allowed_workspaces'],
      [{ name: 'ok', allowed_workspaces: ['nope'] }, 'allowed_workspaces[0]'],
      [{ name: 'ok', extra: 1 }, '(body)'],
    ] as Array<[Record<string, unknown>, string]>) {
      const response = await h.call('POST', '/v1/deployments', adminKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect((await h.call('GET', '/v1/deployments?type=dev', adminKey)).json().error).toMatchObject({ code: 'AB01', param: 'type' })
    expect(await rows('deployments')).toEqual(before)
    await h.store.deployments.create({ organizationId: h.orgId, slug: 'crd-dep', name: 'CRD', type: 'production', managedBy: 'kubernetes' })
    expect((await h.call('PUT', '/v1/deployments/crd-dep', adminKey, { name: 'x' })).statusCode).toBe(409)
    expect((await h.call('DELETE', '/v1/deployments/crd-dep', adminKey)).statusCode).toBe(409)
  })
})
