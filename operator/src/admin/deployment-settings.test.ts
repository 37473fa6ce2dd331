/** Deployments take and answer the reference's deployment_config and auth_settings. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let wsA: string
let wsB: string

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Dep A')).id
  wsB = (await h.workspace('Dep B')).id
})
afterAll(() => h.close())

describe('deployment_config and auth_settings', () => {
  it('are stored and answered on create, read and update; workspaces_allowed is the workspace restriction', async () => {
    const auth_settings = {
      gateway_base_url: 'https://gw.internal.example/v1', use_private_link_proxy: false, is_playground_proxy_allowed: true,
      jwt_subs_allowed: ['svc-a'], jwt_sub_workspace_mapping: { 'svc-a': 'ws-dep-a' }, workspaces_allowed: ['ws-dep-a'],
    }
    const created = await h.call('POST', '/v1/deployments', h.ownerKey, { name: 'Edge', type: 'production', deployment_config: { replicas: 3, region: 'eu-west-1' }, auth_settings })
    expect(created.statusCode, created.body).toBe(200)
    const expected = {
      deployment_config: { replicas: 3, region: 'eu-west-1' },
      auth_settings: { ...auth_settings, jwt_sub_workspace_mapping: { 'svc-a': wsA }, workspaces_allowed: [wsA] },
      allow_all_workspaces: false, allowed_workspaces: [wsA],
    }
    expect(created.json()).toMatchObject(expected)
    expect((await h.call('GET', '/v1/deployments/edge', h.ownerKey)).json()).toMatchObject(expected)
    const updated = await h.call('PUT', '/v1/deployments/edge', h.ownerKey, { deployment_config: { replicas: 5 }, auth_settings: { jwt_subs_allowed: [], workspaces_allowed: [wsB] } })
    expect(updated.statusCode, updated.body).toBe(200)
    expect(updated.json()).toMatchObject({ deployment_config: { replicas: 5 }, auth_settings: { jwt_subs_allowed: [], workspaces_allowed: [wsB] }, allowed_workspaces: [wsB] })
    expect(updated.json().auth_settings.gateway_base_url).toBeUndefined()
  })

  it('refuse unknown or malformed fields naming them, storing nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ auth_settings: { gateway_base_url: 'not a url' } }, 'auth_settings.gateway_base_url'],
      [{ auth_settings: { invented: true } }, 'auth_settings'],
      [{ auth_settings: { workspaces_allowed: ['ghost'] } }, 'auth_settings.workspaces_allowed[0]'],
      [{ auth_settings: { jwt_sub_workspace_mapping: { s: 'ghost' } } }, 'auth_settings.jwt_sub_workspace_mapping.s[0]'],
      [{ deployment_config: 'big' }, 'deployment_config'],
      [{ deployment_config: { blob: 'x'.repeat(70_000) } }, 'deployment_config'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('POST', '/v1/deployments', h.ownerKey, { name: 'Bad', ...body })
      expect(response.statusCode, JSON.stringify(body).slice(0, 100)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect((await h.store.deployments.list(h.orgId)).data.map((d) => d.slug)).toEqual(['edge'])
  })
})
