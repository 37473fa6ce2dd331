/**
 * Embedded mode end to end: one process with the control plane and the gateway. Resources files
 * are loaded (a bad one stops the start naming file, object and field); keys minted through the
 * admin API work at once on the data plane, and a revoked key is refused within a second.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { startEmbedded, type EmbeddedGatehouse } from '../../operator/src/cli/embedded.ts'
import { ResourceError } from '../../operator/src/resources/apply.ts'
import { openMigratedPglite } from '../../operator/src/store/testing.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { adminClient } from '../helpers/admin-client.ts'
import { pollUntil, startGatehouse } from '../helpers/processes.ts'
import { simulatorResourcesYaml } from '../helpers/resources-yaml.ts'

const ADMIN_KEY = generateApiKey('admin')
const silent = pino({ level: 'silent' })
let directory: string
let simulator: Simulator
let gatehouse: EmbeddedGatehouse

function resources(baseUrl: string): string {
  return `${simulatorResourcesYaml(baseUrl, { workspace: 'team-a', workspaceName: 'Team A', apiKey: 'sk-from-secret' })}---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: from-env }
spec:
  kind: groq
  workspace: team-a
  baseUrl: ${baseUrl}
  secretRef: { name: groq-credentials, key: token }
`
}

async function start(files: Record<string, string>, env: Record<string, string> = {}): Promise<EmbeddedGatehouse> {
  const paths = await Promise.all(
    Object.entries(files).map(async ([name, text]) => {
      const path = join(directory, name)
      await writeFile(path, text)
      return path
    }),
  )
  return startEmbedded({
    host: '127.0.0.1',
    port: 0,
    dataDir: null,
    openDatabase: openMigratedPglite,
    resourceFiles: paths,
    env: { GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY, GATEHOUSE_SECRET_GROQ_CREDENTIALS_TOKEN: 'gsk-from-env', ...env },
    logger: silent,
  })
}

const admin = adminClient(() => gatehouse.url, ADMIN_KEY)

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-embedded-'))
  // Two providers share this simulator: an OpenAI one (Secret) and a Groq one (environment).
  simulator = await startOpenAISimulator({ chunks: 2, apiKeys: ['sk-from-secret', 'gsk-from-env'], models: ['gpt-4o-mini', 'llama-3.3-70b'] })
  gatehouse = await start({ 'resources.yaml': resources(simulator.baseUrl) })
}, 60_000)

afterAll(async () => {
  await gatehouse?.close()
  await simulator?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
})

describe('embedded Gatehouse', () => {
  it('serves both planes on one port: a key minted by the admin API calls models at once', async () => {
    const created = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'app', workspace_id: 'team-a', scopes: ['completions.write'] })
    expect(created.status).toBe(200)
    const key = created.body.key as string
    const client = new OpenAI({ apiKey: key, baseURL: `${gatehouse.url}/v1`, maxRetries: 0 })
    const answer = await pollUntil(async () => {
      try {
        await client.chat.completions.create({ model: '@sim/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        return true
      } catch {
        return false
      }
    }, 2000)
    expect(answer).toBeLessThan(2000)
    expect(simulator.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-secret')

    await client.chat.completions.create({ model: '@from-env/llama-3.3-70b', messages: [{ role: 'user', content: 'hi' }] })
    expect(simulator.requests.at(-1)?.headers.authorization).toBe('Bearer gsk-from-env')
  })

  it('refuses a revoked key on the gateway within one second', async () => {
    const created = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'doomed', workspace_id: 'team-a', scopes: ['completions.write'] })
    const key = created.body.key as string
    const models = async (): Promise<number> => (await fetch(`${gatehouse.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status
    await pollUntil(async () => (await models()) === 200, 2000)
    const revokedAt = performance.now()
    expect((await admin(`/v1/api-keys/${created.body.id as string}`, 'DELETE')).status).toBeLessThan(300)
    await pollUntil(async () => (await models()) === 401, 1000, 2)
    expect(performance.now() - revokedAt).toBeLessThan(1000)
  })

  it('refuses admin keys on the data plane and workspace keys on admin routes', async () => {
    const dataPlane = await fetch(`${gatehouse.url}/v1/models`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    expect(dataPlane.status).toBe(403)
    const created = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'ws', workspace_id: 'team-a', scopes: ['completions.write'] })
    const workspaces = await fetch(`${gatehouse.url}/v1/admin/workspaces`, { method: 'POST', headers: { 'x-gateway-api-key': created.body.key as string, 'content-type': 'application/json' }, body: '{"name":"x"}' })
    expect(workspaces.status).toBe(403)
  })
})

describe('resources files are checked before the start', () => {
  const cases: Array<{ name: string; text: string; expected: { object: string; field: string } }> = [
    { name: 'bad-yaml.yaml', text: 'apiVersion: gatehouse.dev/v1alpha1\nkind: Workspace\nmetadata: { name: a\n', expected: { object: 'document #1', field: '' } },
    {
      name: 'bad-field.yaml',
      text: 'apiVersion: gatehouse.dev/v1alpha1\nkind: Workspace\nmetadata: { name: team-b }\nspec: { name: "' + 'x'.repeat(256) + '" }\n',
      expected: { object: 'Workspace/team-b', field: 'spec.name' },
    },
    {
      name: 'dangling-secret.yaml',
      text: 'apiVersion: gatehouse.dev/v1alpha1\nkind: Provider\nmetadata: { name: p }\nspec: { kind: openai, secretRef: { name: nowhere, key: apiKey } }\n',
      expected: { object: 'Provider/p', field: 'spec.secretRef' },
    },
    {
      name: 'dangling-workspace.yaml',
      text: 'apiVersion: gatehouse.dev/v1alpha1\nkind: Provider\nmetadata: { name: q }\nspec: { kind: ollama, workspace: ghost }\n',
      expected: { object: 'Provider/q', field: 'spec.workspace' },
    },
  ]
  it.each(cases)('$name stops the start naming the file, the object and the field', async ({ name, text, expected }) => {
    const failure = await start({ [name]: text }).then(
      async (started) => {
        await started.close()
        return null
      },
      (error: unknown) => error,
    )
    expect(failure).toBeInstanceOf(ResourceError)
    const error = failure as ResourceError
    expect(error.source).toContain(name)
    expect(error.object).toBe(expected.object)
    expect(error.field).toContain(expected.field)
  })

  it('the dangling-secret message names the environment variable that would satisfy it', async () => {
    const text = 'apiVersion: gatehouse.dev/v1alpha1\nkind: Provider\nmetadata: { name: p }\nspec: { kind: openai, secretRef: { name: my-openai, key: apiKey } }\n'
    await expect(start({ 'env.yaml': text })).rejects.toThrow(/GATEHOUSE_SECRET_MY_OPENAI_APIKEY/)
  })
})

describe('gatehouse start (the make run command)', () => {
  it('serves the example resources and prints the bootstrap admin key once', async () => {
    const process = startGatehouse(['start', '--port', '0', '--data-dir', join(directory, 'cli'), '-f', 'examples/resources.yaml'], {})
    try {
      const line = await process.waitForLog((entry) => entry.msg === 'Gatehouse is serving', 60_000)
      expect(process.output.join('\n')).toMatch(/ghk_adm_[0-9A-Za-z]{39}/)
      const health = (await (await fetch(`${line.url}/v1/health`)).json()) as { status: string }
      expect(health.status).toBe('ok')
    } finally {
      await process.stop()
    }
    // A second start over the same data directory keeps the key: nothing is printed again.
    const again = startGatehouse(['start', '--port', '0', '--data-dir', join(directory, 'cli'), '-f', 'examples/resources.yaml'], {})
    try {
      await again.waitForLog((entry) => entry.msg === 'Gatehouse is serving', 60_000)
      expect(again.output.join('\n')).not.toMatch(/ghk_adm_/)
    } finally {
      await again.stop()
    }
  }, 150_000)

  it('meters requests in process: the usage record reaches the store and the logs API', async () => {
    const created = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'metered', workspace_id: 'team-a', scopes: ['completions.write'] })
    const client = new OpenAI({ apiKey: created.body.key as string, baseURL: `${gatehouse.url}/v1`, maxRetries: 0 })
    const { response } = await client.chat.completions.create({ model: '@sim/gpt-4o-mini', messages: [{ role: 'user', content: 'meter me' }] }).withResponse()
    const traceId = response.headers.get('x-gateway-trace-id')!
    let logs: Array<Record<string, unknown>> = []
    await pollUntil(async () => {
      logs = (await admin(`/v1/logs?trace_id=${traceId}`, 'GET')).body.data as Array<Record<string, unknown>>
      return logs.length > 0
    }, 10_000, 100)
    expect(logs).toEqual([expect.objectContaining({ trace_id: traceId, route: 'chat', status_code: 200, provider: 'sim', model: expect.stringContaining('gpt-4o-mini') })])
  })
})
