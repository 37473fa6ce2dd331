/** First start: one organisation, one owner, one bootstrap admin key (generated or from the environment). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey } from '@gatehouse/gateway/snapshot'
import { storeOnDatabase, type Store } from '../store/index.ts'
import { openMigratedPglite } from '../store/testing.ts'
import { ALL_SCOPES } from './scopes.ts'
import { ensureBootstrapAdminKey, ensureOrganization } from './bootstrap.ts'

const PEPPER = 'bootstrap-test-pepper-0123456789abcdef'
let store: Store

beforeEach(async () => {
  store = await storeOnDatabase(await openMigratedPglite())
})
afterEach(() => store.close())

describe('bootstrap', () => {
  it('creates the organisation once and a generated owner key once, with every scope', async () => {
    const org = await ensureOrganization(store)
    expect((await ensureOrganization(store)).id).toBe(org.id)
    const first = await ensureBootstrapAdminKey(store, PEPPER)
    expect(first.created).toBe(true)
    expect(first.rawKey).toMatch(/^ghk_adm_/)
    expect(await ensureBootstrapAdminKey(store, PEPPER)).toEqual({ created: false })
    const found = (await store.apiKeys.findByHash(hashApiKey(first.rawKey!, PEPPER), new Date()))!.key
    expect(found).toMatchObject({ type: 'admin', subtype: 'user', status: 'active' })
    expect(found.scopes).toEqual([...ALL_SCOPES].sort())
    expect((await store.users.get(org.id, found.userId!))!.role).toBe('owner')
  })

  it('stores an environment key hashed, never returns it, and replaces a previous environment key', async () => {
    const fromEnv = generateApiKey('admin')
    expect(await ensureBootstrapAdminKey(store, PEPPER, fromEnv)).toEqual({ created: true })
    expect(await ensureBootstrapAdminKey(store, PEPPER, fromEnv)).toEqual({ created: false })
    const next = generateApiKey('admin')
    expect(await ensureBootstrapAdminKey(store, PEPPER, next)).toEqual({ created: true })
    expect((await store.apiKeys.findByHash(hashApiKey(fromEnv, PEPPER), new Date()))!.key.status).toBe('revoked')
    expect((await store.apiKeys.findByHash(hashApiKey(next, PEPPER), new Date()))!.key.status).toBe('active')
    await expect(ensureBootstrapAdminKey(store, PEPPER, fromEnv)).rejects.toThrow(/revoked/)
  })

  it('refuses an environment value that is not a valid admin key, and a short pepper', async () => {
    await expect(ensureBootstrapAdminKey(store, PEPPER, 'changeme')).rejects.toThrow(/not a valid Gatehouse admin key/)
    await expect(ensureBootstrapAdminKey(store, PEPPER, generateApiKey('workspace'))).rejects.toThrow(/admin key/)
    const valid = generateApiKey('admin')
    const badChecksum = valid.slice(0, -1) + (valid.endsWith('0') ? '1' : '0')
    await expect(ensureBootstrapAdminKey(store, PEPPER, badChecksum)).rejects.toThrow(/checksum/)
    await expect(ensureBootstrapAdminKey(store, 'short')).rejects.toThrow(/pepper/)
  })
})
