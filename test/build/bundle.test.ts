/**
 * The production build (operator/scripts/bundle.ts) works as the sources do. The image and the
 * webhook's sidecar run the build while every other suite runs the sources, so this suite runs the
 * built command itself: each chunk links (the packages left outside resolve from node_modules), the
 * embedded start applies its migrations from the build's folder and serves a model call made with
 * the OpenAI SDK, traced by the bundled OpenTelemetry SDK (taken from its ES modules), and a
 * sidecar started as the webhook writes it serves from its cached snapshot.
 *
 * The build goes under node_modules/.cache, so the packages it leaves outside resolve as they do
 * from the image's /app/dist.
 */
import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { bundle, esmTwin, type BundleResult } from '../../operator/scripts/bundle.ts'
import { SERVER_ENV } from '../../operator/src/cli/node-flags.ts'
import { SIDECAR_ENV, SIDECAR_NODE_FLAGS } from '../../operator/src/webhook/inject.ts'
import { adminClient } from '../helpers/admin-client.ts'
import { decodeProtobufTraces } from '../helpers/otlp-protobuf.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { freePort, pollUntil, startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { simulatorResourcesYaml } from '../helpers/resources-yaml.ts'
import { prepareSidecarCache } from '../helpers/sidecar-cache.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const ADMIN_KEY = generateApiKey('admin')
let built: BundleResult
let script: string
let directory: string
let simulator: Simulator
let receiver: OtlpReceiver
const running: GatehouseProcess[] = []

beforeAll(async () => {
  await mkdir(join(ROOT, 'node_modules', '.cache'), { recursive: true })
  directory = await mkdtemp(join(ROOT, 'node_modules', '.cache', 'gatehouse-build-test-'))
  built = await bundle(join(directory, 'dist'))
  script = built.entries.gatehouse!
  simulator = await startOpenAISimulator({ chunks: 2, apiKeys: ['sk-sim'] })
  receiver = await startOtlpReceiver({ decode: (body) => decodeProtobufTraces(body) })
}, 120_000)

afterAll(async () => {
  await Promise.all(running.map((process) => process.stop()))
  await simulator?.close()
  await receiver?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
})

async function chunkFiles(): Promise<string[]> {
  return (await readdir(built.outDir)).filter((name) => name.endsWith('.mjs')).map((name) => join(built.outDir, name))
}

describe('the production build of the gatehouse command', () => {
  it('is ASCII only, so V8 keeps every chunk at one byte per character', async () => {
    // One character outside ASCII and Node hands V8 the whole file as two-byte text: twice the memory.
    for (const file of await chunkFiles()) {
      const bytes = await readFile(file)
      // UTF-8 spends one byte on a character exactly when it is ASCII.
      expect(bytes.toString('utf8').length, file).toBe(bytes.length)
    }
  })

  it('links: every chunk loads, with the packages kept outside resolved from node_modules', async () => {
    // Entries run when loaded: the command and the first start's initdb process are started, not imported.
    const chunks = (await chunkFiles()).filter((file) => !Object.values(built.entries).includes(file))
    expect(chunks.length).toBeGreaterThan(5)
    const loader = `for (const file of ${JSON.stringify(chunks)}) await import(file)`
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', loader], { encoding: 'utf8', timeout: 60_000 })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
  })

  it('takes OpenTelemetry\'s packages from their ES modules wherever they ship them', () => {
    // A CommonJS build of the SDK reads the API through getters on every span (openTelemetryAsEsm).
    const otel = built.moduleIds.filter((id) => id.includes(`${sep}@opentelemetry${sep}`))
    expect(otel.some((id) => id.includes(`${sep}sdk-trace${sep}build${sep}esm${sep}Tracer.js`))).toBe(true)
    expect(otel.filter((id) => esmTwin(id) !== null)).toEqual([])
  })

  it("holds one of Node's tick objects from the command's first line (gateway/src/core/tick-shape.ts): the bundler keeps the store nothing reads", () => {
    const probe = `process.argv = [process.argv[0], ${JSON.stringify(script)}, '--help']
await import(${JSON.stringify(script)})
setTimeout(() => process.stdout.write('HELD ' + Object.getOwnPropertySymbols(globalThis[Symbol.for('gatehouse.heldTickObject')] ?? {}).length), 10)`
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', timeout: 60_000 })
    expect(result.stderr).toBe('')
    // async_id_symbol, trigger_async_id_symbol and the async context frame's.
    expect(result.stdout).toMatch(/HELD 3$/)
  })

  it('answers --help and validate as the sources do', () => {
    const help = spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8' })
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^Usage: gatehouse <command>/)
    const valid = spawnSync(process.execPath, [script, 'validate', '-f', join(ROOT, 'examples/resources.yaml')], { encoding: 'utf8' })
    expect(valid.stderr).toBe('')
    expect(valid.status).toBe(0)
  })

  it('starts embedded on an empty data directory (initdb and migrations in the build\'s child process) and serves a model call, traced', async () => {
    const resources = join(directory, 'resources.yaml')
    await writeFile(resources, simulatorResourcesYaml(simulator.baseUrl, { workspace: 'team-a', workspaceName: 'Team A', apiKey: 'sk-sim' }))
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_BSP_SCHEDULE_DELAY: '100' }
    const gatehouse = startGatehouse(['start', '--port', '0', '--data-dir', join(directory, 'data'), '-f', resources], { GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY, ...tracing }, [], script)
    running.push(gatehouse)
    const serving = await gatehouse.waitForLog((line) => line.msg === 'Gatehouse is serving', 90_000)
    const admin = adminClient(() => serving.url!, ADMIN_KEY)
    const created = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'app', workspace_id: 'team-a', scopes: ['completions.write'] })
    expect(created.status).toBe(200)
    const client = new OpenAI({ apiKey: created.body.key as string, baseURL: `${serving.url}/v1`, maxRetries: 0 })
    let answer: OpenAI.ChatCompletion | undefined
    await pollUntil(async () => {
      answer = await client.chat.completions.create({ model: '@sim/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined)
      return answer !== undefined
    }, 5000)
    expect(answer!.choices[0]!.message.content).toBeTruthy()
    const upstream = simulator.requests.at(-1)!
    expect(upstream.headers.authorization).toBe('Bearer sk-sim')
    // The provider's traceparent names the attempt's CLIENT span, itself under the request's SERVER span.
    const [, traceId, parentSpanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(upstream.headers.traceparent))!
    const spans = await receiver.waitFor((all) => all.filter((span) => span.traceId === traceId).length >= 2)
    const attempt = spans.find((span) => span.spanId === parentSpanId)!
    expect(attempt.kind).toBe(SPAN_KIND.client)
    const server = spans.find((span) => span.spanId === attempt.parentSpanId)!
    expect(server.kind).toBe(SPAN_KIND.server)
    expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'http.response.status_code': 200, 'gen_ai.response.id': answer!.id })
  }, 150_000)

  it('runs as the injected sidecar: serves from its cached snapshot with the control plane down', async () => {
    const cache = join(directory, 'sidecar-cache')
    await mkdir(cache)
    await prepareSidecarCache(cache, { upstream: simulator.baseUrl, upstreamKey: 'sk-sim' })
    const port = await freePort()
    const sidecar = startGatehouse(['sidecar'], {
      ...SERVER_ENV,
      ...SIDECAR_ENV,
      GATEHOUSE_CONTROL_PLANE_URL: `http://127.0.0.1:${await freePort()}`,
      GATEHOUSE_SIDECAR_DEPLOYMENT: 'ai-config/ai',
      GATEHOUSE_SIDECAR_TOKEN_FILE: join(cache, 'absent-token'),
      GATEHOUSE_SNAPSHOT_CACHE: cache,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HEALTH_HOST: '127.0.0.1',
      GATEHOUSE_HEALTH_PORT: '0',
    }, SIDECAR_NODE_FLAGS, script)
    running.push(sidecar)
    // No key: the sidecar admits its pod's own calls as the pod's identity.
    const client = new OpenAI({ apiKey: 'gatehouse-sidecar-no-key-needed', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 })
    let answer: OpenAI.ChatCompletion | undefined
    await pollUntil(async () => {
      answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined)
      return answer !== undefined
    }, 30_000, 50)
    expect(answer!.choices[0]!.message.content).toBeTruthy()
  }, 60_000)
})
