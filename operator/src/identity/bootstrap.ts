/**
 * First start:
 *  - `ensureOrganization(store)` creates the installation's single organisation (idempotent).
 *  - `ensureBootstrapAdminKey(store, pepper, rawFromEnv?)` makes sure an owner exists with an admin
 *    service key holding every scope. With GATEHOUSE_ADMIN_API_KEY set, that value must be a valid
 *    Gatehouse admin key (`ghk_adm_…`, checksum included; mint one with `gatehouse admin-key`): an
 *    arbitrary string would bypass the format and checksum guarantees every other key has. It is
 *    stored hashed and never returned; when the variable later names a different key, the previous
 *    environment key is revoked (the variable is the source of truth). Without it, a key is
 *    generated once at first start and returned for the caller to print; later starts return
 *    `{ created: false }`.
 */
import { randomUUID } from 'node:crypto'
import { apiKeyHint, generateApiKey, hashApiKey, parseApiKey } from '@gatehouse/gateway/snapshot'
import type { OrganizationRecord, Store } from '../store/index.ts'
import { ALL_SCOPES } from './scopes.ts'

export const DEFAULT_ORGANIZATION_NAME = 'Default organization'
export const BOOTSTRAP_OWNER_EMAIL = 'owner@gatehouse.local'
export const BOOTSTRAP_KEY_NAME = 'bootstrap admin key'
/** Minimum pepper length: a short pepper would make offline guessing of stolen hashes cheaper. */
export const MIN_PEPPER_LENGTH = 32
const ENV_CREATOR = 'bootstrap:environment'
const GENERATED_CREATOR = 'bootstrap:generated'

export function assertPepper(pepper: string): void {
  if (typeof pepper !== 'string' || pepper.length < MIN_PEPPER_LENGTH) {
    throw new Error(`the API key pepper must be at least ${MIN_PEPPER_LENGTH} characters (GATEHOUSE_KEY_PEPPER)`)
  }
}

export async function ensureOrganization(store: Store, name = DEFAULT_ORGANIZATION_NAME): Promise<OrganizationRecord> {
  const existing = await store.organizations.first()
  if (existing) return existing
  try {
    return await store.organizations.create({ name })
  } catch (error) {
    // Another replica may have created it between our read and write.
    const raced = await store.organizations.first()
    if (raced) return raced
    throw error
  }
}

export async function ensureBootstrapAdminKey(store: Store, pepper: string, rawFromEnv?: string): Promise<{ created: boolean; rawKey?: string }> {
  assertPepper(pepper)
  if (rawFromEnv !== undefined && rawFromEnv !== '' && parseApiKey(rawFromEnv)?.type !== 'admin') {
    throw new Error('GATEHOUSE_ADMIN_API_KEY is not a valid Gatehouse admin key (expected ghk_adm_… with a valid checksum; `gatehouse admin-key` prints one)')
  }
  const organization = await ensureOrganization(store)
  const fromEnv = rawFromEnv !== undefined && rawFromEnv !== ''
  const rawKey = fromEnv ? rawFromEnv : generateApiKey('admin')
  const keyHash = hashApiKey(rawKey, pepper)
  return store.transaction(async (tx) => {
    let owner = (await tx.users.list(organization.id, { role: 'owner' }, 0, 1)).data[0]
    owner ??= await tx.users.create({ organizationId: organization.id, email: BOOTSTRAP_OWNER_EMAIL, role: 'owner', firstName: 'Owner' })
    if (fromEnv) {
      const existing = await tx.apiKeys.findByHash(keyHash, new Date())
      if (existing) {
        if (existing.key.status !== 'active' || existing.matched !== 'current') {
          throw new Error('GATEHOUSE_ADMIN_API_KEY names a key that was revoked, expired or rotated away; set a new key')
        }
        return { created: false }
      }
      await tx.apiKeys.revokeByCreator(organization.id, ENV_CREATOR, new Date())
    } else {
      // Generated keys are minted only on the very first start: any admin key means we are past it.
      const existing = await tx.apiKeys.list(organization.id, { kinds: ['admin/service', 'admin/user'] }, 0, 1)
      if (existing.total > 0) return { created: false }
    }
    await tx.apiKeys.insert({
      id: randomUUID(),
      organizationId: organization.id,
      workspaceId: null,
      userId: owner.id,
      type: 'admin',
      subtype: 'user',
      name: BOOTSTRAP_KEY_NAME,
      keyHash,
      keyHint: apiKeyHint(rawKey),
      scopes: [...ALL_SCOPES].sort(),
      creationMode: 'auto',
      createdBy: fromEnv ? ENV_CREATOR : GENERATED_CREATOR,
    })
    await tx.audit.record({ organizationId: organization.id, actorType: 'system', actorId: 'bootstrap', action: 'api_key.bootstrap', resourceType: 'api_key', details: { source: fromEnv ? 'environment' : 'generated' } })
    return fromEnv ? { created: true } : { created: true, rawKey }
  })
}
