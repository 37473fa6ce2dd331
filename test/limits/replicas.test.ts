/**
 * Two gateway processes share one 60 rpm limit through Redis (127.0.0.1:6379, a random key
 * prefix): 100 requests spread over both admit exactly 60 together in the minute; the rest get 429
 * with retry-after and the x-ratelimit headers.
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { buildSnapshot, TEST_PEPPER } from '../helpers/gateway.ts'
import { startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

let directory: string
let simulator: Simulator
const processes: GatehouseProcess[] = []
const urls: string[] = []
const workspaceKey = generateApiKey('workspace')

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-limits-'))
  simulator = await startOpenAISimulator({ chunks: 2, recordLimit: 0 })
  const snapshot = buildSnapshot([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], { workspaceKey, adminKey: generateApiKey('admin') })
  snapshot.limits = [{ id: 'rpm60', source: 'policy', ownerId: 'rpm60', name: 'shared rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 60, conditions: [{ key: 'api_key', values: ['key-ws'] }] }]
  const file = join(directory, 'snapshot.json')
  await writeFile(file, JSON.stringify(snapshot))
  const prefix = `test-${randomUUID().slice(0, 8)}:`
  for (let index = 0; index < 2; index++) {
    const gateway = startGatehouse(['gateway'], {
      GATEHOUSE_KEY_PEPPER: TEST_PEPPER,
      GATEHOUSE_SNAPSHOT_FILE: file,
      GATEHOUSE_PORT: '0',
      GATEHOUSE_REDIS_URL: 'redis://127.0.0.1:6379',
      GATEHOUSE_LIMITS_KEY_PREFIX: prefix,
    })
    processes.push(gateway)
    urls.push((await gateway.waitForLog((entry) => entry.msg === 'gateway is serving')).url!)
  }
}, 60_000)

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()))
  await simulator?.close()
  await rm(directory, { recursive: true, force: true })
})

describe('a rate limit shared by gateway replicas', () => {
  it('admits exactly 60 of 100 requests across two processes within the minute', async () => {
    const responses = await Promise.all(Array.from({ length: 100 }, async (_, index) => {
      const response = await fetch(`${urls[index % 2]}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${workspaceKey}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi ${index}` }] }),
      })
      return { status: response.status, headers: response.headers, body: (await response.json()) as { error?: { code: string; message: string } } }
    }))
    const admitted = responses.filter((r) => r.status === 200)
    const refused = responses.filter((r) => r.status === 429)
    expect(admitted).toHaveLength(60)
    expect(refused).toHaveLength(40)
    // Both replicas served part of the 60: the count is shared, not per process.
    expect(new Set(responses.map((r, index) => (r.status === 200 ? index % 2 : -1)).filter((i) => i >= 0)).size).toBe(2)
    expect(refused[0]!.body.error).toMatchObject({ code: 'rate_limited' })
    expect(refused[0]!.body.error!.message).toContain("policy 'shared rpm'")
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused[0]!.headers.get('x-ratelimit-limit-requests')).toBe('60')
    expect(refused[0]!.headers.get('x-ratelimit-remaining-requests')).toBe('0')
    expect(admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
  })
})
