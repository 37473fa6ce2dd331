/**
 * DELETE on a workspace archives it, and the running gateway refuses that workspace's keys at once
 * (embedded Gatehouse: the admin API and the data plane in one process, the real snapshot path).
 */
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { startEmbedded, type EmbeddedGatehouse } from '../../operator/src/cli/embedded.ts'
import { adminClient } from '../helpers/admin-client.ts'
import { pollUntil } from '../helpers/processes.ts'

const ADMIN_KEY = generateApiKey('admin')
let gatehouse: EmbeddedGatehouse

const admin = adminClient(() => gatehouse.url, ADMIN_KEY)

beforeAll(async () => {
  gatehouse = await startEmbedded({ host: '127.0.0.1', port: 0, dataDir: null, resourceFiles: [], env: { GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY }, logger: pino({ level: 'silent' }) })
}, 60_000)

afterAll(async () => {
  await gatehouse?.close()
})

describe('archived workspaces on the data plane', () => {
  it('refuses the keys of a workspace archived by DELETE within a second', async () => {
    const workspace = await admin('/v1/admin/workspaces', 'POST', { name: 'Short lived' })
    expect(workspace.status).toBe(200)
    const created = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'app', workspace_id: workspace.body.id, scopes: ['completions.write'] })
    expect(created.status).toBe(200)
    const models = async (): Promise<Response> => fetch(`${gatehouse.url}/v1/models`, { headers: { authorization: `Bearer ${created.body.key as string}` } })
    await pollUntil(async () => (await models()).status === 200, 2000)

    const archivedAt = performance.now()
    expect((await admin(`/v1/admin/workspaces/${workspace.body.id as string}`, 'DELETE')).status).toBe(200)
    await pollUntil(async () => (await models()).status === 403, 1000, 2)
    expect(performance.now() - archivedAt).toBeLessThan(1000)
    const refused = await models()
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/not active/)
    const listed = await admin('/v1/admin/workspaces?status=archived', 'GET')
    expect((listed.body.data as Array<{ id: string; status: string }>).find((w) => w.id === workspace.body.id)?.status).toBe('archived')
  })
})
