/**
 * The operator's side of Gatehouse against a running embedded instance: every CLI command
 * (admin-key, keys, get, describe, validate), resources files edited while it runs, /metrics on
 * its own port, and the graceful drain on shutdown.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import OpenAI from 'openai'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmbedded, type EmbeddedGatehouse } from '../../operator/src/cli/embedded.ts'
import { runCommand } from '../../operator/src/cli/main.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { pollUntil } from '../helpers/processes.ts'

let directory: string
let resourcesPath: string
let simulator: Simulator
let gatehouse: EmbeddedGatehouse | null = null
let adminKey: string
const logs: Array<Record<string, unknown>> = []

const WORKSPACE = `apiVersion: gatehouse.dev/v1alpha1
kind: Workspace
metadata: { name: team-a }
spec: { name: Team A }
`
const provider = (name: string, baseUrl: string): string => `---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: ${name} }
spec:
  kind: openai
  workspace: team-a
  baseUrl: ${baseUrl}
  secretRef: { name: sim-credentials, key: apiKey }
`
const REST = `---
apiVersion: gatehouse.dev/v1alpha1
kind: Config
metadata: { name: routing }
spec:
  workspace: team-a
  config: { strategy: { mode: fallback }, targets: [{ provider: '@sim' }] }
---
apiVersion: gatehouse.dev/v1alpha1
kind: RateLimitPolicy
metadata: { name: per-key-rpm }
spec:
  workspace: team-a
  conditions: [{ key: workspace_id, value: team-a }]
  groupBy: [{ key: api_key }]
  type: requests
  unit: rpm
  value: 1000
---
apiVersion: v1
kind: Secret
metadata: { name: sim-credentials }
stringData: { apiKey: sk-sim }
`

/** Runs one command in-process; the environment points it at the running Gatehouse. */
async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const status = await runCommand(argv, {
    stdout: (text) => { stdout += text },
    stderr: (text) => { stderr += text },
    env: { HOME: directory, GATEHOUSE_URL: gatehouse?.url ?? '', GATEHOUSE_ADMIN_API_KEY: adminKey, ...env },
  })
  return { status, stdout, stderr }
}

function capture(): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
}

let workspaceKey: string

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-cli-'))
  simulator = await startOpenAISimulator({ chunks: 2, apiKeys: ['sk-sim'] })
  resourcesPath = join(directory, 'resources.yaml')
  await writeFile(resourcesPath, WORKSPACE + provider('sim', simulator.baseUrl) + REST)
  // The admin key the instance trusts comes from `gatehouse admin-key`: the command's output is a valid key.
  const printed = await runCommand(['admin-key'], { stdout: (text) => { adminKey = text.trim() }, stderr: () => {}, env: {} })
  expect(printed).toBe(0)
  gatehouse = await startEmbedded({
    host: '127.0.0.1',
    port: 0,
    metricsPort: 0,
    dataDir: null,
    resourceFiles: [resourcesPath],
    watchResourceFiles: true,
    env: { GATEHOUSE_ADMIN_API_KEY: adminKey, GATEHOUSE_SHUTDOWN_DELAY_MS: '600', GATEHOUSE_SHUTDOWN_TIMEOUT_MS: '10000' },
    logger: pino({ level: 'info' }, capture()),
  })
  const created = await cli(['keys', 'create', '--name', 'app', '--workspace', 'team-a', '--scope', 'completions.write'])
  workspaceKey = created.stdout.trim()
}, 120_000)

afterAll(async () => {
  await gatehouse?.close()
  await simulator?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
})

async function chat(model: string): Promise<number> {
  const response = await fetch(`${gatehouse!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${workspaceKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })
  await response.arrayBuffer()
  return response.status
}

describe('gatehouse admin-key and keys', () => {
  it('admin-key prints a key in the admin format, which the instance accepts', async () => {
    expect(adminKey).toMatch(/^ghk_adm_[0-9A-Za-z]{39}$/)
    const response = await fetch(`${gatehouse!.url}/v1/admin/workspaces`, { headers: { 'x-gateway-api-key': adminKey } })
    expect(response.status).toBe(200)
  })

  it('keys create prints a workspace key that calls models', async () => {
    expect(workspaceKey).toMatch(/^ghk_ws_/)
    await pollUntil(async () => (await chat('@sim/gpt-4o-mini')) === 200, 3000, 50)
  })

  it('keys list shows the key in a table and as JSON; rotate gives a new secret; revoke ends it', async () => {
    const table = await cli(['keys', 'list', '--workspace', 'team-a'])
    expect(table.status).toBe(0)
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+TYPE\s+WORKSPACE_ID\s+STATUS/)
    expect(table.stdout).toMatch(/\sapp\s+workspace-service\s/)
    const listed = JSON.parse((await cli(['keys', 'list', '--workspace', 'team-a', '-o', 'json'])).stdout) as { data: Array<{ id: string; name: string }> }
    const id = listed.data.find((key) => key.name === 'app')!.id

    const rotated = await cli(['keys', 'rotate', id])
    expect(rotated.status).toBe(0)
    const newKey = rotated.stdout.trim()
    expect(newKey).toMatch(/^ghk_ws_/)
    expect(newKey).not.toBe(workspaceKey)
    workspaceKey = newKey
    await pollUntil(async () => (await chat('@sim/gpt-4o-mini')) === 200, 3000, 50)

    const revoked = await cli(['keys', 'revoke', id])
    expect(revoked).toMatchObject({ status: 0, stdout: `revoked ${id}\n` })
    await pollUntil(async () => (await chat('@sim/gpt-4o-mini')) === 401, 3000, 50)
    const after = JSON.parse((await cli(['keys', 'list', '--workspace', 'team-a', '-o', 'json'])).stdout) as { data: Array<{ id: string; status: string }> }
    // A revoked key is no longer listed as active.
    expect(after.data.filter((key) => key.id === id && key.status === 'active')).toEqual([])
    workspaceKey = (await cli(['keys', 'create', '--name', 'app-2', '--workspace', 'team-a', '--scope', 'completions.write'])).stdout.trim()
    await pollUntil(async () => (await chat('@sim/gpt-4o-mini')) === 200, 3000, 50)
  })

  it('a refusal is the API message with exit status 1; no key is exit status 2 naming where to put one', async () => {
    const refused = await cli(['keys', 'rotate', 'no-such-key'])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^gatehouse: POST \/v1\/api-keys\/no-such-key\/rotate: 404 /)
    const missing = await cli(['keys', 'list'], { GATEHOUSE_ADMIN_API_KEY: '', GATEHOUSE_CONFIG: join(directory, 'no-config.json') })
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain('GATEHOUSE_ADMIN_API_KEY')
  })

  it('reads the URL and key from the config file when the environment has none', async () => {
    const config = join(directory, 'config.json')
    await writeFile(config, JSON.stringify({ url: gatehouse!.url, adminKey }))
    const result = await cli(['get', 'workspaces'], { GATEHOUSE_URL: '', GATEHOUSE_ADMIN_API_KEY: '', GATEHOUSE_CONFIG: config })
    expect(result.stderr).toBe('')
    expect(result.stdout).toContain('team-a')
  })
})

describe('gatehouse get and describe', () => {
  it.each([
    ['workspaces', 'team-a', /^SLUG\s+NAME\s+STATUS\s+MANAGED_BY\n/],
    ['providers', 'sim', /^SLUG\s+NAME\s+PROVIDER\s+WORKSPACE_ID\s+STATUS\s+MANAGED_BY\n/],
    ['configs', 'routing', /^SLUG\s+NAME\s+WORKSPACE_ID\s+IS_DEFAULT\s+STATUS\s+MANAGED_BY\n/],
    ['policies', 'per-key-rpm', /^ID\s+NAME\s+OBJECT\s+TYPE\s+WORKSPACE_ID\s+STATUS\n/],
  ])('get %s lists %s in a table and as JSON', async (kind, name, header) => {
    const table = await cli(['get', kind])
    expect(table.status).toBe(0)
    expect(table.stdout).toMatch(header)
    expect(table.stdout).toContain(name)
    const json = JSON.parse((await cli(['get', kind, '-o', 'json'])).stdout) as { total: number; data: Array<Record<string, unknown>> }
    expect(json.data.some((item) => item.slug === name || item.name === name)).toBe(true)
  })

  it('describe shows every field of one object; -o json the object itself', async () => {
    const described = await cli(['describe', 'provider', 'sim'])
    expect(described.status).toBe(0)
    expect(described.stdout).toMatch(/^slug:\s+sim$/m)
    expect(described.stdout).toMatch(/^managed_by:\s+file$/m)
    expect(described.stdout).not.toContain('sk-sim')
    const config = JSON.parse((await cli(['describe', 'configs', 'routing', '-o', 'json'])).stdout) as { config: unknown }
    expect(config.config).toMatchObject({ targets: [{ provider: '@sim' }] })
    const policies = JSON.parse((await cli(['get', 'policies', '-o', 'json'])).stdout) as { data: Array<{ id: string }> }
    expect((await cli(['describe', 'policy', policies.data[0]!.id])).stdout).toMatch(/^name:\s+per-key-rpm$/m)
  })

  it('an unknown name says so, exit status 1', async () => {
    const result = await cli(['describe', 'workspaces', 'nowhere'])
    expect(result).toMatchObject({ status: 1, stderr: "gatehouse: no workspace named 'nowhere'\n" })
  })
})

describe('gatehouse validate', () => {
  it('lists every problem of a broken set with file, line, object and field; exit status 1', async () => {
    const broken = join(directory, 'broken.yaml')
    await writeFile(broken, `apiVersion: gatehouse.dev/v1alpha1
kind: Workspace
metadata: { name: w }
spec: { name: W }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: p }
spec:
  kind: not-a-kind
---
apiVersion: gatehouse.dev/v1alpha1
kind: Config
metadata: { name: c }
spec:
  workspace: w
  config:
    strategy: { mode: fallback }
    targets:
      - provider: '@deadx'
---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: q }
spec: { kind: ollama, workspace: ghost, secretRef: { name: nowhere, key: apiKey } }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Deployment
metadata: { name: d }
spec: { type: production, config: missing }
`)
    const syntax = join(directory, 'syntax.yaml')
    await writeFile(syntax, 'apiVersion: gatehouse.dev/v1alpha1\nkind: Workspace\nmetadata: { name: a\n')
    const result = await cli(['validate', '-f', broken, '-f', syntax, '-f', join(directory, 'absent.yaml')])
    expect(result.status).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toEqual(expect.arrayContaining([
      expect.stringMatching(new RegExp(`^${broken}:10:9: Provider/p: spec.kind: `)),
      `${broken}:20:19: Config/c: spec.config.targets[0].provider: no Provider '@deadx' is declared`,
      `${broken}:25:34: Provider/q: spec.workspace: no Workspace named 'ghost'`,
      expect.stringMatching(new RegExp(`^${broken}:25:52: Provider/q: spec.secretRef: no v1/Secret 'nowhere'`)),
      `${broken}:30:35: Deployment/d: spec.config: no Config named 'missing'`,
      // A syntax error names its position once, in the file:line:column prefix.
      expect.stringMatching(new RegExp(`^${syntax}:4:1: document #1: Flow map in block collection must be sufficiently indented and end with a }$`)),
      `${join(directory, 'absent.yaml')}: cannot read the file: no such file`,
      '7 problems in ' + [broken, syntax, join(directory, 'absent.yaml')].join(', '),
    ]))
    expect(lines).toHaveLength(8)
    const json = JSON.parse((await cli(['validate', '-o', 'json', broken])).stdout) as { valid: boolean; problems: Array<{ line: number }> }
    expect(json.valid).toBe(false)
    expect(json.problems.map((problem) => problem.line)).toEqual([10, 25, 25, 30, 20])
  })

  it('a valid set exits 0; no file is a usage error (2)', async () => {
    expect(await cli(['validate', '-f', resourcesPath])).toMatchObject({ status: 0, stdout: `${resourcesPath}: 4 objects, valid\n` })
    expect((await cli(['validate'])).status).toBe(2)
  })

  it('a start refuses a Config whose target does not resolve, naming file and line', async () => {
    const path = join(directory, 'deadx.yaml')
    await writeFile(path, `${WORKSPACE}---\napiVersion: gatehouse.dev/v1alpha1\nkind: Config\nmetadata: { name: r }\nspec: { workspace: team-a, config: { targets: [{ provider: '@deadx' }], strategy: { mode: fallback } } }\n`)
    await expect(startEmbedded({ host: '127.0.0.1', port: 0, dataDir: null, resourceFiles: [path], env: {}, logger: pino({ level: 'silent' }) }))
      .rejects.toThrow(`${path}:9:60: Config/r: spec.config.targets[0].provider: no Provider '@deadx' is declared`)
  }, 60_000)
})

describe('resources files edited under a running Gatehouse', () => {
  it('an added provider serves within a second', async () => {
    await writeFile(resourcesPath, WORKSPACE + provider('sim', simulator.baseUrl) + provider('sim2', simulator.baseUrl) + REST)
    const elapsed = await pollUntil(async () => (await chat('@sim2/gpt-4o-mini')) === 200, 5000, 20)
    expect(elapsed).toBeLessThan(1000)
  })

  it('a broken edit keeps the previous state and logs every problem with its line', async () => {
    const before = logs.length
    await writeFile(resourcesPath, `${WORKSPACE + provider('sim', simulator.baseUrl) + provider('sim2', simulator.baseUrl) + REST}---\napiVersion: gatehouse.dev/v1alpha1\nkind: Config\nmetadata: { name: bad }\nspec: { workspace: team-a, config: { targets: [{ provider: '@gone' }], strategy: { mode: fallback } } }\n`)
    await pollUntil(async () => logs.slice(before).some((line) => line.msg === 'resources files not applied; the previous state keeps serving'), 5000, 20)
    const line = logs.slice(before).find((entry) => entry.msg === 'resources files not applied; the previous state keeps serving')!
    expect(line.level).toBe(50)
    expect(line.problems).toEqual([expect.stringMatching(/resources\.yaml:\d+:\d+: Config\/bad: spec\.config\.targets\[0\]\.provider: no Provider '@gone' is declared$/)])
    expect(await chat('@sim2/gpt-4o-mini')).toBe(200)
    expect(await gatehouse!.store.configs.get(gatehouse!.store.organizations ? (await gatehouse!.store.organizations.first())!.id : '', 'bad')).toBeNull()
  })

  it('an object removed from the file stops serving', async () => {
    await writeFile(resourcesPath, WORKSPACE + provider('sim', simulator.baseUrl) + REST)
    const elapsed = await pollUntil(async () => (await chat('@sim2/gpt-4o-mini')) === 404, 5000, 20)
    expect(elapsed).toBeLessThan(1000)
    expect(await chat('@sim/gpt-4o-mini')).toBe(200)
    expect(JSON.parse((await cli(['get', 'providers', '-o', 'json'])).stdout).data.map((item: { slug: string }) => item.slug)).toEqual(['sim'])
  })
})

describe('the data-plane port', () => {
  it('does not answer /metrics; the metrics port does', async () => {
    expect((await fetch(`${gatehouse!.url}/metrics`)).status).toBe(404)
    expect(gatehouse!.metricsUrl).not.toBe(gatehouse!.url)
    const metrics = await fetch(`${gatehouse!.metricsUrl}/metrics`)
    expect(metrics.status).toBe(200)
    expect(await metrics.text()).toContain('gatehouse_http_requests_total')
  })

  it('a mistyped data-plane route names itself, not the admin API', async () => {
    const response = await fetch(`${gatehouse!.url}/v1/chat/completion`, { method: 'POST', headers: { authorization: `Bearer ${workspaceKey}`, 'content-type': 'application/json' }, body: '{}' })
    expect(response.status).toBe(404)
    const body = (await response.json()) as { error: { message: string; code: string } }
    expect(body.error.code).toBe('route_not_found')
    expect(body.error.message).toBe('No route POST /v1/chat/completion; did you mean /v1/chat/completions?')
  })
})

describe('shutdown', () => {
  it('fails readiness first, keeps serving through the drain window, and lets a stream in flight finish', async () => {
    const running = gatehouse!
    simulator.options.chunks = 12
    simulator.options.tokenIntervalMs = 100
    const client = new OpenAI({ apiKey: workspaceKey, baseURL: `${running.url}/v1`, maxRetries: 0 })
    const stream = await client.chat.completions.create({ model: '@sim/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] })
    const chunks = (async () => {
      let count = 0
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) count += 1
      return count
    })()
    const drained = running.drain()
    gatehouse = null
    expect((await fetch(`${running.url}/readyz`)).status).toBe(503)
    // Load balancers that have not yet noticed still get answers during the window.
    expect((await fetch(`${running.url}/v1/health`)).status).toBe(200)
    expect(await chunks).toBe(12)
    await drained
    await expect(fetch(`${running.url}/livez`)).rejects.toThrow()
  }, 30_000)
})
