/**
 * Organisation security settings under the spec's names and defaults, with workspace overrides;
 * documents stored under the earlier names are read as the new ones and rewritten by migration 0003.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { effectiveSettings, SECURITY_SETTING_DEFAULTS } from '../identity/settings.ts'
import { loadMigrations } from '../store/migrate.ts'
import { openPostgresDatabase } from '../store/postgres-driver.ts'
import { createTestDatabase } from '../store/testing.ts'
import { createHarness, type Harness } from './testing.ts'

let h: Harness

beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

const OLD_STYLE = {
  data_visibility: { request_response_bodies: 'managers_and_admins', mask_bodies: true },
  prompt_access: { view: 'all_members', edit: 'admins_only' },
  analytics_access: { view: 'admins_only' },
}
const OLD_AS_NEW = {
  membersViewAllData: false, managersViewAllData: true,
  membersViewPrompts: true, managersViewPrompts: true,
  membersWritePrompts: false, managersWritePrompts: false,
  membersViewAnalytics: false, managersViewAnalytics: false,
}

describe('security settings', () => {
  it('are served under the spec names with the spec defaults', async () => {
    const settings = (await h.call('GET', '/v1/organisation/settings', h.ownerKey)).json().security_settings
    expect(settings).toEqual({
      membersViewAllData: true, managersViewAllData: true,
      membersViewPrompts: true, membersWritePrompts: false, managersViewPrompts: true, managersWritePrompts: true,
      membersViewAnalytics: true, managersViewAnalytics: true,
    })
  })

  it('update by name, refuse the earlier names and non-booleans, and apply workspace overrides', async () => {
    const put = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { security_settings: { membersViewPrompts: false } })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json().security_settings).toMatchObject({ membersViewPrompts: false, managersViewPrompts: true })
    for (const bad of [{ prompt_access: { view: 'admins_only' } }, { membersViewPrompts: 'no' }]) {
      const response = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { security_settings: bad })
      expect(response.statusCode).toBe(400)
      expect(response.json().error.param).toMatch(/^security_settings/)
    }
    const ws = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'Override', settings: { security_settings: { membersViewPrompts: true, managersWritePrompts: false } } })
    expect(ws.statusCode, ws.body).toBe(200)
    const org = (await h.store.organizations.get(h.orgId))!
    const workspace = (await h.store.workspaces.get(h.orgId, ws.json().id))!
    expect(effectiveSettings(org.settings, workspace.settings).security_settings).toEqual({ ...SECURITY_SETTING_DEFAULTS, membersViewPrompts: true, managersWritePrompts: false })
    expect(effectiveSettings(org.settings).security_settings).toMatchObject({ membersViewPrompts: false })
  })

  it('read documents stored under the earlier names as the spec flags', async () => {
    await h.db.query('UPDATE organizations SET settings = $1::jsonb WHERE id = $2', [JSON.stringify({ security_settings: OLD_STYLE }), h.orgId])
    const settings = (await h.call('GET', '/v1/organisation/settings', h.ownerKey)).json().security_settings
    expect(settings).toEqual({ ...SECURITY_SETTING_DEFAULTS, ...OLD_AS_NEW })
    // An update over an old document leaves only the new names.
    const put = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { security_settings: { membersViewAllData: true } })
    expect(put.statusCode, put.body).toBe(200)
    expect((await h.store.organizations.get(h.orgId))!.settings.security_settings).toEqual({ ...OLD_AS_NEW, membersViewAllData: true })
  })
})

describe('migration 0003', () => {
  it('rewrites stored organisation and workspace security settings under the spec names', async () => {
    const { url, drop } = await createTestDatabase()
    const db = await openPostgresDatabase({ url, maxConnections: 1 })
    try {
      const migrations = await loadMigrations()
      for (const migration of migrations.filter((m) => m.version < 3)) await db.script(migration.sql)
      await db.query("INSERT INTO organizations (id, name, settings) VALUES ('o1', 'Org', $1::jsonb)", [JSON.stringify({ session_settings: { max_session_ttl: 900 }, security_settings: OLD_STYLE })])
      await db.query("INSERT INTO workspaces (id, organization_id, slug, name, settings) VALUES ('w1', 'o1', 'w', 'W', $1::jsonb), ('w2', 'o1', 'v', 'V', '{}'::jsonb)",
        [JSON.stringify({ security_settings: { analytics_access: { view: 'all_members' }, membersViewPrompts: false } })])
      await db.script(migrations.find((m) => m.version === 3)!.sql)
      const [org] = await db.query<{ settings: Record<string, unknown> }>("SELECT settings FROM organizations WHERE id = 'o1'")
      expect(org!.settings).toEqual({ session_settings: { max_session_ttl: 900 }, security_settings: OLD_AS_NEW })
      const workspaces = await db.query<{ id: string; settings: Record<string, unknown> }>('SELECT id, settings FROM workspaces ORDER BY id')
      expect(workspaces.map((w) => w.settings)).toEqual([
        { security_settings: { membersViewAnalytics: true, managersViewAnalytics: true, membersViewPrompts: false } },
        {},
      ])
    } finally {
      await db.close()
      await drop()
    }
  })
})
