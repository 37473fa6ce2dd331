/**
 * Vault KV v2 secret references against a loopback HTTP server speaking Vault's API: token
 * header, `/v1/<mount>/data/<path>`, the `{data: {data, metadata}}` answer, 403 and 404. Through
 * the reader, the secret-mapping resolver, and the admin API with a compiled snapshot.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../admin/testing.ts'
import type { SecretReferenceRecord } from '../store/index.ts'
import { compileSnapshot } from './snapshot.ts'
import { resolveSecretMappings, secretReader } from './secrets.ts'
import { parseVaultPath, readVaultSecret, VaultReadError, type VaultSettings } from './vault.ts'

const TOKEN = 'hvs.test-token-0123456789'
const SECRETS: Record<string, Record<string, unknown>> = {
  'secret/apps/openai': { api_key: 'sk-from-vault-123456', org: 'org-9' },
  'kv/team.a/anthropic': { key: 'sk-ant-vault-abcdef', nested: { a: 1 } },
}
const seen: Array<{ url: string; token: string | undefined; namespace: string | undefined }> = []
let server: Server
let vault: VaultSettings

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ url: request.url!, token: request.headers['x-vault-token'] as string | undefined, namespace: request.headers['x-vault-namespace'] as string | undefined })
    const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (request.method !== 'GET') return send(405, { errors: [] })
    if (request.headers['x-vault-token'] !== TOKEN) return send(403, { errors: ['permission denied'] })
    const match = /^\/v1\/([^/]+)\/data\/(.+)$/.exec(request.url!)
    const key = match ? `${decodeURIComponent(match[1]!)}/${match[2]!.split('/').map(decodeURIComponent).join('/')}` : ''
    if (key === 'secret/forbidden') return send(403, { errors: ['1 error occurred:\n\t* permission denied\n\n'] })
    const data = SECRETS[key]
    if (!data) return send(404, { errors: [] })
    return send(200, { request_id: 'r', lease_id: '', renewable: false, lease_duration: 0, data: { data, metadata: { created_time: '2030-01-01T00:00:00Z', version: 3, destroyed: false } } })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  vault = { address: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), token: TOKEN, namespace: 'team-ns', timeoutMs: 2000 }
})
afterAll(() => new Promise((resolve) => server.close(resolve)))

describe('readVaultSecret', () => {
  it('reads a key of a KV v2 secret with the token and namespace headers', async () => {
    expect(await readVaultSecret(vault, 'secret/apps/openai', 'api_key')).toBe('sk-from-vault-123456')
    expect(seen.at(-1)).toEqual({ url: '/v1/secret/data/apps/openai', token: TOKEN, namespace: 'team-ns' })
    expect(await readVaultSecret(vault, 'kv/team.a/anthropic', 'nested')).toBe('{"a":1}')
    expect(seen.at(-1)!.url).toBe('/v1/kv/data/team.a/anthropic')
  })

  it('answers null for a missing secret (404) or key, and a VaultReadError without the token for 403', async () => {
    expect(await readVaultSecret(vault, 'secret/apps/missing', 'api_key')).toBeNull()
    expect(await readVaultSecret(vault, 'secret/apps/openai', 'nope')).toBeNull()
    const refused = await readVaultSecret(vault, 'secret/forbidden', 'x').catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(VaultReadError)
    expect(String(refused)).toMatch(/403/)
    const badToken = await readVaultSecret({ ...vault, token: 'hvs.wrong' }, 'secret/apps/openai', 'api_key').catch((error: unknown) => error)
    expect(String(badToken)).toMatch(/403/)
    expect(String(badToken)).not.toContain('hvs.')
  })

  it('refuses locations that are not <mount>/<path> or that climb out with dot segments', () => {
    expect(parseVaultPath('secret/apps/openai')).toEqual({ mount: 'secret', path: 'apps/openai' })
    for (const bad of ['secret', 'secret/../sys/raw', 'secret/./x', '/secret/x', 'secret//x', 'secret/x?y']) expect(parseVaultPath(bad), bad).toBeNull()
  })
})

describe('secret mappings onto Vault references', () => {
  it('resolve through the reader; an unreadable one is reported without values', async () => {
    const base: SecretReferenceRecord = {
      id: 'v1', organizationId: 'o', slug: 'v1', name: 'V', description: null, managerType: 'hashicorp_vault', secretPath: 'secret/apps/openai', secretKey: 'api_key',
      allowAllWorkspaces: true, allowedWorkspaceIds: [], tags: {}, status: 'active', managedBy: null, createdBy: null, createdAt: '', updatedAt: '',
    }
    const references = new Map([['v1', base], ['v2', { ...base, id: 'v2', slug: 'v2', secretPath: 'secret/forbidden' }]])
    const resolved = await resolveSecretMappings([
      { target_field: 'key', secret_reference_id: 'v1' },
      { target_field: 'openai_organization', secret_reference_id: 'v1', secret_key: 'org' },
      { target_field: 'aws_secret_access_key', secret_reference_id: 'v2' },
    ], references, null, secretReader({ vault }))
    expect(resolved.credentials).toEqual({ apiKey: 'sk-from-vault-123456' })
    expect(resolved.options).toMatchObject({ organization: 'org-9' })
    expect(resolved.problems).toEqual(['aws_secret_access_key: Vault secret secret/forbidden key api_key could not be read (missing, refused, or no Vault configured)'])
    // No Vault configured: unreadable, never a call.
    const before = seen.length
    expect(await secretReader({})({ managerType: 'hashicorp_vault', path: 'secret/apps/openai', key: 'api_key' })).toBeNull()
    expect(seen.length).toBe(before)
  })
})

describe('admin API', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(() => h.close())

  it('creates hashicorp_vault references, refuses malformed ones, and a provider mapped onto one compiles with the Vault value', async () => {
    for (const [body, param] of [
      [{ secret_path: 'secret', secret_key: 'k' }, 'secret_path'],
      [{ secret_path: 'secret/../sys', secret_key: 'k' }, 'secret_path'],
      [{ secret_path: 'secret/apps/openai' }, 'secret_key'],
    ] as const) {
      const refused = await h.call('POST', '/v1/secret-references', h.ownerKey, { name: 'bad', manager_type: 'hashicorp_vault', ...body })
      expect(refused.statusCode).toBe(400)
      expect(refused.json().error).toMatchObject({ code: 'AB01', param })
    }
    const created = await h.call('POST', '/v1/secret-references', h.ownerKey, { name: 'OpenAI in Vault', slug: 'vault-openai', manager_type: 'hashicorp_vault', secret_path: 'secret/apps/openai', secret_key: 'api_key' })
    expect(created.statusCode, created.body).toBe(200)
    expect((await h.call('GET', '/v1/secret-references?manager_type=hashicorp_vault', h.ownerKey)).json().total).toBe(1)
    const provider = await h.call('POST', '/v1/providers', h.ownerKey, {
      name: 'Vaulted', provider: 'openai', secret_mappings: [{ target_field: 'key', secret_reference_id: created.json().id }],
    })
    expect(provider.statusCode, provider.body).toBe(200)
    const snapshot = await compileSnapshot(h.store, { generation: 1, clock: h.clock.read, readSecret: secretReader({ vault }) })
    const compiled = snapshot.providers.find((p) => p.slug === 'vaulted')!
    expect(compiled.credentials).toEqual({ apiKey: 'sk-from-vault-123456' })
    expect(compiled.status).toBe('active')
  })
})
