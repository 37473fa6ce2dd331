/**
 * Key authentication against a runtime, including the cache of already verified keys: it must
 * never outlive the snapshot that verified the key (revocation), nor let an unknown key in.
 */
import { describe, expect, it } from 'vitest'
import { RuntimeHolder } from '../runtime/holder.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'
import { generateApiKey, hashApiKey, SNAPSHOT_SCHEMA_VERSION, type GatewaySnapshotInput } from '../snapshot/index.ts'
import { authenticateKey, refuseRepeatedCredentials } from './authenticate.ts'

const PEPPER = 'unit-test-pepper'

function runtimeWith(keys: { raw: string; status: 'active' | 'revoked'; expiresAt?: string }[], generation: number): RuntimeConfig {
  const snapshot: GatewaySnapshotInput = {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation,
    producedAt: new Date(0).toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [{ id: 'ws', slug: 'ws', name: 'WS', status: 'active' }],
    apiKeys: keys.map((key, index) => ({
      id: `key-${index}`,
      hash: hashApiKey(key.raw, PEPPER),
      type: 'workspace',
      subtype: 'service',
      workspaceId: 'ws',
      scopes: [],
      status: key.status,
      expiresAt: key.expiresAt ?? null,
    })),
    providers: [],
  }
  const holder = new RuntimeHolder()
  const applied = holder.apply(snapshot)
  if (!applied.ok) throw new Error(JSON.stringify(applied.problems))
  return holder.current!
}

describe('authenticateKey', () => {
  const raw = generateApiKey('workspace')

  it('accepts an active key, again from the verified-key cache', () => {
    const runtime = runtimeWith([{ raw, status: 'active' }], 1)
    expect(authenticateKey(runtime, raw, PEPPER, Date.now()).record.id).toBe('key-0')
    expect(authenticateKey(runtime, raw, PEPPER, Date.now()).record.id).toBe('key-0')
  })

  it('refuses a key revoked by a newer snapshot even after it was verified', () => {
    const before = runtimeWith([{ raw, status: 'active' }], 1)
    authenticateKey(before, raw, PEPPER, Date.now())
    const after = runtimeWith([{ raw, status: 'revoked' }], 2)
    expect(() => authenticateKey(after, raw, PEPPER, Date.now())).toThrow(expect.objectContaining({ code: 'invalid_api_key' }))
  })

  it('checks expiry on every request, cached or not', () => {
    const runtime = runtimeWith([{ raw, status: 'active', expiresAt: '2030-01-01T00:00:00.000Z' }], 1)
    const expiry = Date.parse('2030-01-01T00:00:00.000Z')
    expect(authenticateKey(runtime, raw, PEPPER, expiry - 1).record.id).toBe('key-0')
    expect(() => authenticateKey(runtime, raw, PEPPER, expiry)).toThrow(expect.objectContaining({ code: 'expired_api_key' }))
  })

  it('refuses missing, malformed and unknown keys', () => {
    const runtime = runtimeWith([{ raw, status: 'active' }], 1)
    expect(() => authenticateKey(runtime, undefined, PEPPER, 0)).toThrow(expect.objectContaining({ code: 'missing_api_key' }))
    expect(() => authenticateKey(runtime, 'not-a-key', PEPPER, 0)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }))
    expect(() => authenticateKey(runtime, generateApiKey('workspace'), PEPPER, 0)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }))
  })

  it('does not accept a valid key under another pepper, verified or not', () => {
    const runtime = runtimeWith([{ raw, status: 'active' }], 1)
    expect(() => authenticateKey(runtime, raw, 'other-pepper', 0)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }))
    authenticateKey(runtime, raw, PEPPER, 0)
    expect(() => authenticateKey(runtime, raw, 'other-pepper', 0)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }))
  })
})

describe('refuseRepeatedCredentials', () => {
  it('refuses two Authorization headers or two x-gateway-api-key headers, in any case', () => {
    expect(() => refuseRepeatedCredentials(['Authorization', 'Bearer a', 'authorization', 'Bearer b'])).toThrow(expect.objectContaining({ code: 'invalid_header', status: 400, param: 'authorization' }))
    expect(() => refuseRepeatedCredentials(['x-gateway-api-key', 'a', 'Host', 'h', 'X-Gateway-Api-Key', 'b'])).toThrow(expect.objectContaining({ param: 'x-gateway-api-key' }))
  })

  it('accepts one of each: the explicit header keeps precedence', () => {
    expect(() => refuseRepeatedCredentials(['x-gateway-api-key', 'a', 'authorization', 'Bearer b', 'accept', '*/*'])).not.toThrow()
  })
})
