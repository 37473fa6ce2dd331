/**
 * API key lifecycle rules: who may create, change, rotate and delete which key, with which scopes,
 * limits and expiry. HTTP routes parse bodies with the schemas below and call these functions; the
 * raw key exists only in the return value of `createApiKey` and `rotateApiKey`.
 */
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { apiKeyHint, generateApiKey, hashApiKey, parseApiKey } from '@gatehouse/gateway/snapshot'
import type { ApiKeyRecord, Repositories, RotationPolicy, Store, WorkspaceRecord } from '../store/index.ts'
import { conflict, forbidden, invalid, notFound } from '../errors.ts'
import { keyRateLimitSchema, usageLimitsSchema } from './limits.ts'
import type { Principal } from './principal.ts'
import { ALL_SCOPES, WORKSPACE_SCOPE_SET, normaliseScope } from './scopes.ts'
import { effectiveSettings } from './settings.ts'

const DAY_MS = 86_400_000
export const MIN_KEY_TRANSITION_MS = 30 * 60 * 1000
/** Transition window when neither the request nor the policy names one. */
export const DEFAULT_KEY_TRANSITION_MS = DAY_MS
const ROTATION_PERIOD_MS = { weekly: 7 * DAY_MS, monthly: 28 * DAY_MS } as const

export type KeyKind = 'admin/service' | 'admin/user' | 'workspace/service' | 'workspace/user'

/** Scope family that governs each kind of key. */
export const KEY_SCOPE_FAMILY: Record<KeyKind, string> = {
  'admin/service': 'organisation_service_api_keys',
  'admin/user': 'organisation_user_api_keys',
  'workspace/service': 'workspace_service_api_keys',
  'workspace/user': 'workspace_user_api_keys',
}

export const rotationPolicySchema = z.strictObject({
  rotation_period: z.enum(['weekly', 'monthly']).optional(),
  next_rotation_at: z.iso.datetime({ offset: true }).optional(),
  key_transition_period_ms: z.int().min(MIN_KEY_TRANSITION_MS, 'key_transition_period_ms must be at least 1800000 (30 minutes)').optional(),
}).superRefine((value, ctx) => {
  // Both together mean "first on that date, then every period" (the spec lists both fields; the
  // issue tracker called refusing the pair a defect): a period policy reschedules from each rotation.
  if (value.rotation_period === undefined && value.next_rotation_at === undefined) {
    ctx.addIssue({ code: 'custom', path: ['rotation_period'], message: 'give rotation_period (a recurring rotation), next_rotation_at (the next rotation\'s date), or both (first on that date, then every period)' })
  }
  if (value.rotation_period && value.key_transition_period_ms !== undefined && value.key_transition_period_ms >= ROTATION_PERIOD_MS[value.rotation_period]) {
    ctx.addIssue({ code: 'custom', path: ['key_transition_period_ms'], message: 'key_transition_period_ms must be shorter than the rotation period' })
  }
})

const scopesSchema = z.array(z.string().min(1).max(100)).min(1).max(200)
const nameSchema = z.string().trim().min(1).max(255)
const defaultsSchema = z.strictObject({
  metadata: z.record(z.string(), z.string()).optional(),
  config_id: z.string().min(1).max(255).nullable().optional(),
  allow_config_override: z.boolean().optional(),
})

export const createApiKeySchema = z.strictObject({
  name: nameSchema,
  description: z.string().max(1000).nullable().optional(),
  scopes: scopesSchema,
  organisation_id: z.string().optional(),
  workspace_id: z.string().min(1).optional(),
  user_id: z.string().min(1).optional(),
  rate_limits: z.array(keyRateLimitSchema).max(10).nullable().optional(),
  usage_limits: usageLimitsSchema.nullable().optional(),
  defaults: defaultsSchema.optional(),
  alert_emails: z.array(z.email()).max(50).optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  rotation_policy: rotationPolicySchema.nullable().optional(),
})

export const updateApiKeySchema = z.strictObject({
  name: nameSchema.optional(),
  description: z.string().max(1000).nullable().optional(),
  scopes: scopesSchema.optional(),
  rate_limits: z.array(keyRateLimitSchema).max(10).nullable().optional(),
  usage_limits: usageLimitsSchema.nullable().optional(),
  defaults: defaultsSchema.optional(),
  alert_emails: z.array(z.email()).max(50).optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  rotation_policy: rotationPolicySchema.nullable().optional(),
  /** Starts a new usage period now (`last_reset_at`). */
  reset_usage: z.boolean().optional(),
})

export const rotateApiKeySchema = z.strictObject({
  key_transition_period_ms: z.int().min(MIN_KEY_TRANSITION_MS, 'key_transition_period_ms must be at least 1800000 (30 minutes)').optional(),
})

export type CreateApiKeyBody = z.infer<typeof createApiKeySchema>
export type UpdateApiKeyBody = z.infer<typeof updateApiKeySchema>

export function kindOf(key: Pick<ApiKeyRecord, 'type' | 'subtype'>): KeyKind {
  return `${key.type}/${key.subtype}` as KeyKind
}

function familyScope(kind: KeyKind, action: string): string {
  return `${KEY_SCOPE_FAMILY[kind]}.${action}`
}

/** Whether `principal` may `action` keys of `kind` in `workspaceId` (null for admin keys). */
export function mayManageKeys(principal: Principal, kind: KeyKind, action: string, workspaceId: string | null): boolean {
  return principal.has(familyScope(kind, action), workspaceId)
}

/** Normalises, checks the catalog and the key type, and refuses anything beyond the creator's own scopes. */
export function checkScopes(principal: Principal, requested: readonly string[], type: 'admin' | 'workspace', workspaceId: string | null): string[] {
  const scopes = [...new Set(requested.map(normaliseScope))]
  const allowed = principal.effectiveScopes(workspaceId)
  scopes.forEach((scope, index) => {
    if (!ALL_SCOPES.has(scope)) throw invalid(`scopes[${index}]`, `unknown scope "${scope}"`)
    if (type === 'workspace' && !WORKSPACE_SCOPE_SET.has(scope)) throw invalid(`scopes[${index}]`, `"${scope}" is an organisation scope; a workspace key cannot hold it`)
  })
  const beyond = scopes.filter((scope) => !allowed.has(scope))
  if (beyond.length > 0) throw forbidden(`a key cannot be given scopes its creator does not hold: ${beyond.join(', ')}`)
  return scopes.sort()
}

function assertFuture(value: string | null | undefined, now: Date, param: string): void {
  if (value != null && new Date(value).getTime() <= now.getTime()) throw invalid(param, `${param} must be in the future`)
}

/** The next scheduled rotation for a policy, counted from `from`. */
export function nextRotationAt(policy: RotationPolicy | null | undefined, from: Date): string | null {
  if (!policy) return null
  if (policy.rotation_period === 'weekly') return new Date(from.getTime() + ROTATION_PERIOD_MS.weekly).toISOString()
  if (policy.rotation_period === 'monthly') {
    // Same day next month, clamped to that month's last day (31 Jan -> 28/29 Feb, not 3 Mar).
    const year = from.getUTCFullYear()
    const month = from.getUTCMonth() + 1
    const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
    const next = new Date(from)
    next.setUTCFullYear(year, month, Math.min(from.getUTCDate(), lastDay))
    return next.toISOString()
  }
  return null
}

function policyRecord(policy: z.infer<typeof rotationPolicySchema>): RotationPolicy {
  const record: RotationPolicy = { key_transition_period_ms: policy.key_transition_period_ms ?? DEFAULT_KEY_TRANSITION_MS }
  if (policy.rotation_period) record.rotation_period = policy.rotation_period
  if (policy.next_rotation_at) record.next_rotation_at = new Date(policy.next_rotation_at).toISOString()
  return record
}

/** Applies the user-key expiry settings (default and maximum) of the workspace/organisation. */
function userKeyExpiry(requested: string | null | undefined, settings: ReturnType<typeof effectiveSettings>, now: Date): string | null {
  const keySettings = settings.api_key_settings ?? {}
  const maxDays = keySettings.user_key_max_expiry_days ?? null
  const defaultDays = keySettings.user_key_default_expiry_days ?? maxDays
  if (requested === undefined || requested === null) {
    if (requested === null && maxDays !== null) throw invalid('expires_at', `user keys must expire within ${maxDays} days`)
    return defaultDays === null ? null : new Date(now.getTime() + defaultDays * DAY_MS).toISOString()
  }
  if (maxDays !== null && new Date(requested).getTime() > now.getTime() + maxDays * DAY_MS) {
    throw invalid('expires_at', `user keys must expire within ${maxDays} days`)
  }
  return new Date(requested).toISOString()
}

async function activeWorkspace(tx: Repositories, principal: Principal, idOrSlug: string, lock: boolean): Promise<WorkspaceRecord> {
  const found = await tx.workspaces.get(principal.organizationId, idOrSlug)
  const visible = principal.visibleWorkspaceIds()
  // A workspace-confined caller learns nothing about workspaces outside its reach, not even existence.
  if (visible !== null && (!found || !visible.includes(found.id))) throw forbidden('this credential may not create keys in that workspace')
  if (!found) throw invalid('workspace_id', 'workspace not found')
  if (found.status !== 'active') throw conflict('the workspace is archived', 'workspace_id')
  return lock ? (await tx.workspaces.lock(principal.organizationId, found.id))! : found
}

/** Keys minted by keys minted by ... a user: how far back a service key's user is looked for. */
const MAX_CREATOR_HOPS = 8

/**
 * The user a calling service key acts for: the user who created it, directly or through the keys
 * that created it (created_by holds a user id or a key id). Null when the chain ends at no user
 * (the bootstrap key, a key whose creator is gone).
 */
async function callingKeyUser(tx: Repositories, principal: Principal): Promise<string | null> {
  let keyId = principal.via === 'api_key' ? principal.keyId : null
  for (let hop = 0; keyId !== null && hop < MAX_CREATOR_HOPS; hop += 1) {
    const key = await tx.apiKeys.get(principal.organizationId, keyId)
    if (!key) return null
    if (key.userId) return key.userId
    if (!key.createdBy) return null
    if (await tx.users.get(principal.organizationId, key.createdBy)) return key.createdBy
    keyId = key.createdBy
  }
  return null
}

export interface CreatedKey {
  key: ApiKeyRecord
  rawKey: string
}

export async function createApiKey(
  store: Store,
  pepper: string,
  principal: Principal,
  type: 'admin' | 'workspace',
  subtype: 'service' | 'user',
  body: CreateApiKeyBody,
  now: Date,
): Promise<CreatedKey> {
  const organizationId = principal.organizationId
  if (body.organisation_id !== undefined && body.organisation_id !== organizationId) throw invalid('organisation_id', 'organisation_id does not match the caller\'s organisation')
  const kind: KeyKind = `${type}/${subtype}`
  return store.transaction(async (tx) => {
    let workspace: WorkspaceRecord | null = null
    if (type === 'workspace') {
      const wanted = body.workspace_id ?? principal.workspaceId
      if (!wanted) throw invalid('workspace_id', 'workspace_id is required for a workspace key')
      workspace = await activeWorkspace(tx, principal, wanted, subtype === 'user')
    } else if (body.workspace_id !== undefined) {
      throw invalid('workspace_id', 'an organisation key does not belong to a workspace')
    }
    const workspaceId = workspace?.id ?? null
    if (!mayManageKeys(principal, kind, 'create', workspaceId)) {
      throw forbidden(`this credential may not create ${type} ${subtype} keys${workspace ? ' in this workspace' : ''}`)
    }
    const scopes = checkScopes(principal, body.scopes, type, workspaceId)

    let userId: string | null = null
    if (subtype === 'user') {
      // The spec: without user_id the key is the caller's own; user_id is the on-behalf-of case.
      userId = body.user_id ?? principal.user?.id ?? await callingKeyUser(tx, principal)
      if (!userId) throw invalid('user_id', 'user_id is required: the calling credential belongs to no user')
      const owner = await tx.users.get(organizationId, userId)
      if (!owner) throw invalid('user_id', 'user not found')
      if (type === 'admin' && owner.role === 'member') throw invalid('user_id', 'an organisation key can only belong to an owner or admin')
      if (type === 'workspace' && owner.role === 'member' && !(await tx.members.get(workspaceId!, userId))) {
        throw invalid('user_id', 'the user is not a member of this workspace')
      }
    } else if (body.user_id !== undefined) {
      throw invalid('user_id', 'a service key does not belong to a user')
    }

    const organisation = await tx.organizations.get(organizationId)
    const settings = effectiveSettings(organisation?.settings, workspace?.settings)
    assertFuture(body.expires_at, now, 'expires_at')
    const expiresAt = subtype === 'user' ? userKeyExpiry(body.expires_at, settings, now) : body.expires_at ? new Date(body.expires_at).toISOString() : null
    if (subtype === 'user' && workspace) {
      const cap = settings.api_key_settings?.user_keys_per_workspace_max ?? null
      if (cap !== null && (await tx.apiKeys.countActiveUserKeys(workspace.id)) >= cap) {
        throw conflict(`this workspace allows at most ${cap} active user keys`)
      }
    }
    const policy = body.rotation_policy ? policyRecord(body.rotation_policy) : null
    assertFuture(policy?.next_rotation_at, now, 'rotation_policy.next_rotation_at')

    const rawKey = generateApiKey(type)
    const key = await tx.apiKeys.insert({
      id: randomUUID(),
      organizationId,
      workspaceId,
      userId,
      type,
      subtype,
      name: body.name,
      description: body.description ?? null,
      keyHash: hashApiKey(rawKey, pepper),
      keyHint: apiKeyHint(rawKey),
      scopes,
      expiresAt,
      rotationPolicy: policy,
      nextRotationAt: policy?.next_rotation_at ?? nextRotationAt(policy, now),
      usageLimits: body.usage_limits ?? null,
      rateLimits: body.rate_limits ?? null,
      defaults: body.defaults ?? {},
      alertEmails: body.alert_emails ?? [],
      createdBy: principal.actor.id,
    })
    return { key, rawKey }
  })
}

/** Loads a key the principal may act on with `action`, or throws 404 (unknown or invisible) / 403. */
export async function keyForAction(store: Store, principal: Principal, id: string, action: string): Promise<ApiKeyRecord> {
  const key = await store.apiKeys.get(principal.organizationId, id)
  if (!key || key.status === 'revoked') throw notFound('API key')
  const visible = principal.visibleWorkspaceIds()
  if (visible !== null && (key.workspaceId === null || !visible.includes(key.workspaceId))) throw notFound('API key')
  // A workspace member sees only their own keys; others' do not exist for them.
  if (principal.authority(key.workspaceId) === 'member' && key.userId !== principal.user?.id) throw notFound('API key')
  if (!mayManageKeys(principal, kindOf(key), action, key.workspaceId)) throw forbidden(`this credential may not ${action} this key`)
  return key
}

export async function updateApiKey(store: Store, principal: Principal, id: string, body: UpdateApiKeyBody, now: Date): Promise<ApiKeyRecord> {
  const key = await keyForAction(store, principal, id, 'update')
  if (body.scopes !== undefined && principal.keyId === key.id) throw forbidden('a key cannot change its own scopes')
  const scopes = body.scopes === undefined ? undefined : checkScopes(principal, body.scopes, key.type, key.workspaceId)
  assertFuture(body.expires_at, now, 'expires_at')
  let expiresAt: string | null | undefined = body.expires_at === undefined ? undefined : body.expires_at === null ? null : new Date(body.expires_at).toISOString()
  if (key.subtype === 'user' && body.expires_at !== undefined) {
    const organisation = await store.organizations.get(key.organizationId)
    const workspace = key.workspaceId ? await store.workspaces.get(key.organizationId, key.workspaceId) : null
    expiresAt = userKeyExpiry(body.expires_at, effectiveSettings(organisation?.settings, workspace?.settings), now)
  }
  const policy = body.rotation_policy === undefined ? undefined : body.rotation_policy === null ? null : policyRecord(body.rotation_policy)
  assertFuture(policy?.next_rotation_at, now, 'rotation_policy.next_rotation_at')
  const updated = await store.apiKeys.update(key.organizationId, key.id, {
    name: body.name,
    description: body.description,
    scopes,
    expiresAt,
    rotationPolicy: policy,
    nextRotationAt: policy === undefined ? undefined : policy === null ? null : policy.next_rotation_at ?? nextRotationAt(policy, now),
    usageLimits: body.usage_limits,
    rateLimits: body.rate_limits,
    defaults: body.defaults,
    alertEmails: body.alert_emails,
    lastResetAt: body.reset_usage ? now.toISOString() : undefined,
    // A reset brings an exhausted key back.
    status: body.reset_usage && key.status === 'exhausted' ? 'active' : undefined,
  })
  if (!updated) throw notFound('API key')
  return updated
}

/**
 * What a rotation at `now` leaves scheduled: a period policy schedules the next one from now; a
 * one-shot next_rotation_at is consumed by the rotation it scheduled, but survives an earlier
 * manual rotation (the owner asked for a rotation on that date, not for one rotation in total).
 */
function nextRotationAfter(key: ApiKeyRecord, now: Date): string | null {
  if (key.rotationPolicy?.rotation_period) return nextRotationAt(key.rotationPolicy, now)
  return key.nextRotationAt !== null && new Date(key.nextRotationAt).getTime() > now.getTime() ? key.nextRotationAt : null
}

export interface RotatedKey {
  key: ApiKeyRecord
  rawKey: string
  transitionEndsAt: string
}

/**
 * New secret, same id. The old secret stays valid for the transition window (the request's, else
 * the policy's, else 24 h). Also used by the scheduled-rotation worker.
 */
export async function rotateKeyRecord(store: Store, pepper: string, key: ApiKeyRecord, transitionMs: number | undefined, now: Date): Promise<RotatedKey | null> {
  const windowMs = transitionMs ?? key.rotationPolicy?.key_transition_period_ms ?? DEFAULT_KEY_TRANSITION_MS
  const rawKey = generateApiKey(key.type)
  const transitionEndsAt = new Date(now.getTime() + windowMs).toISOString()
  const rotated = await store.apiKeys.rotate(key.organizationId, key.id, {
    keyHash: hashApiKey(rawKey, pepper),
    keyHint: apiKeyHint(rawKey),
    transitionEndsAt,
    nextRotationAt: nextRotationAfter(key, now),
    now: now.toISOString(),
    expectedKeyHash: key.keyHash,
  })
  return rotated ? { key: rotated, rawKey, transitionEndsAt } : null
}

export async function rotateApiKey(store: Store, pepper: string, principal: Principal, id: string, transitionMs: number | undefined, now: Date): Promise<RotatedKey> {
  const key = await keyForAction(store, principal, id, 'rotate')
  if (key.status !== 'active') throw conflict(`the key is ${key.status} and cannot be rotated`)
  const rotated = await rotateKeyRecord(store, pepper, key, transitionMs, now)
  if (!rotated) throw conflict('the key changed while rotating; retry')
  return rotated
}

export async function deleteApiKey(store: Store, principal: Principal, id: string, now: Date): Promise<ApiKeyRecord> {
  const key = await keyForAction(store, principal, id, 'delete')
  await store.apiKeys.revoke(key.organizationId, key.id, now)
  return key
}

export const revokeBySecretSchema = z.strictObject({ key: z.string().min(1).max(200) })

/**
 * Revokes the key whose current or in-transition secret is `raw`. Answers the same for unknown and
 * already-dead keys (null) so the endpoint cannot be used to test which secrets are live.
 */
export async function revokeBySecret(store: Store, pepper: string, raw: string, now: Date): Promise<ApiKeyRecord | null> {
  if (!parseApiKey(raw)) throw invalid('key', 'not a Gatehouse API key')
  const found = await store.apiKeys.findByHash(hashApiKey(raw, pepper), now)
  if (!found || found.key.status === 'revoked') return null
  await store.apiKeys.revoke(found.key.organizationId, found.key.id, now)
  return found.key
}

/** The public shape of a key (never its secret or hash). */
export function apiKeyView(key: ApiKeyRecord): Record<string, unknown> {
  return {
    id: key.id,
    key: key.keyHint,
    name: key.name,
    description: key.description,
    type: `${key.type === 'admin' ? 'organisation' : 'workspace'}-${key.subtype}`,
    organisation_id: key.organizationId,
    workspace_id: key.workspaceId,
    user_id: key.userId,
    status: key.status,
    scopes: key.scopes,
    rate_limits: key.rateLimits,
    usage_limits: key.usageLimits,
    last_reset_at: key.lastResetAt,
    defaults: key.defaults,
    alert_emails: key.alertEmails,
    expires_at: key.expiresAt,
    rotation_policy: key.rotationPolicy ? { ...key.rotationPolicy, next_rotation_at: key.nextRotationAt } : null,
    last_rotated_at: key.lastRotatedAt,
    key_transition_expires_at: key.previousKeyExpiresAt,
    creation_mode: key.creationMode,
    created_at: key.createdAt,
    last_updated_at: key.updatedAt,
    object: 'api-key',
  }
}
