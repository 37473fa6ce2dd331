/** Reading secret references: environment variables, Kubernetes Secrets (data and stringData), JSON fields. */
import { describe, expect, it } from 'vitest'
import type { SecretReferenceRecord } from '../store/index.ts'
import { kubeSecretSource, resolveSecretMappings, secretReader } from './secrets.ts'

const reference = (over: Partial<SecretReferenceRecord>): SecretReferenceRecord => ({
  id: 'r1', organizationId: 'o', slug: 'r1', name: 'R1', description: null, managerType: 'environment', secretPath: 'KEY', secretKey: null,
  allowAllWorkspaces: true, allowedWorkspaceIds: [], tags: {}, status: 'active', managedBy: null, createdBy: null, createdAt: '', updatedAt: '', ...over,
})

describe('secretReader', () => {
  it('reads environment variables and Kubernetes Secret keys (default namespace or namespace/name)', async () => {
    const asked: unknown[] = []
    const client = {
      async get(_type: unknown, namespace: string, name: string) {
        asked.push([namespace, name])
        return name === 'keys'
          ? { metadata: { name }, data: { openai: Buffer.from('sk-from-data').toString('base64') }, stringData: { plain: 'sk-from-string-data' } }
          : null
      },
    }
    const read = secretReader({ env: { OPENAI_KEY: 'sk-env' }, kubernetes: kubeSecretSource(client, 'gatehouse') })
    expect(await read({ managerType: 'environment', path: 'OPENAI_KEY', key: null })).toBe('sk-env')
    expect(await read({ managerType: 'environment', path: 'MISSING', key: null })).toBeNull()
    expect(await read({ managerType: 'kubernetes', path: 'keys', key: 'openai' })).toBe('sk-from-data')
    expect(await read({ managerType: 'kubernetes', path: 'team-a/keys', key: 'plain' })).toBe('sk-from-string-data')
    expect(await read({ managerType: 'kubernetes', path: 'absent', key: 'x' })).toBeNull()
    expect(asked).toEqual([['gatehouse', 'keys'], ['team-a', 'keys'], ['gatehouse', 'absent']])
    expect(await secretReader({ env: {} })({ managerType: 'kubernetes', path: 'keys', key: 'openai' })).toBeNull()
  })
})

describe('resolveSecretMappings', () => {
  it('maps wire fields to gateway credential and option names, picks JSON fields, reports without values', async () => {
    const references = new Map([
      ['r1', reference({})],
      ['r2', reference({ id: 'r2', slug: 'r2', secretPath: 'JSON', secretKey: 'inner' })],
      ['r3', reference({ id: 'r3', slug: 'r3', allowAllWorkspaces: false, allowedWorkspaceIds: ['w1'] })],
    ])
    const read = secretReader({ env: { KEY: 'sk-secret-value', JSON: '{"inner":"nested-secret"}' } })
    const resolved = await resolveSecretMappings([
      { target_field: 'key', secret_reference_id: 'r1' },
      { target_field: 'aws_secret_access_key', secret_reference_id: 'r2' },
      { target_field: 'aws_region', secret_reference_id: 'r1' },
      { target_field: 'key', secret_reference_id: 'r3' },
      { target_field: 'aws_session_token', secret_reference_id: 'gone' },
    ], references, 'w2', read)
    expect(resolved.credentials).toEqual({ apiKey: 'sk-secret-value', secretAccessKey: 'nested-secret' })
    expect(resolved.options).toEqual({ region: 'sk-secret-value' })
    expect(resolved.problems).toEqual([
      'key: secret reference r3 is not shared with this workspace',
      'aws_session_token: secret reference gone does not exist',
    ])
  })
})
