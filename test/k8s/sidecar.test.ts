/**
 * Sidecar mode for real: a kube-apiserver calling the operator's admission webhook at a loopback
 * URL (its certificate made and its caBundle written by the operator itself), PostgreSQL, the
 * `gatehouse operator` process and the OpenAI simulator.
 *
 * - A labelled pod comes back with the gateway as a native sidecar, the SDK variables and the
 *   projected-token volume; unlabelled and kube-system pods are untouched; a pod matched by both
 *   webhooks (pod label and namespace label), and a copy of an injected pod, carry one sidecar; an
 *   annotation naming a missing Deployment, or an unusable port, is refused with a message.
 * - The injected container's command runs as a process with the environment the webhook wrote
 *   (volume mounts mapped to temporary directories) and a pod-bound ServiceAccount token from
 *   TokenRequest: the control plane admits it by TokenReview and it serves the bound workspace to
 *   the official OpenAI SDK configured only by the webhook's OPENAI_BASE_URL (and placeholder key).
 * - Tokens of an unbound service account, of another audience, or garbage are refused.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey, SIDECAR_KEY_HEADER, SIDECAR_STREAM_PATH, sidecarKeyPair } from '@gatehouse/gateway/snapshot'
import { testBackends, TEST_ENCRYPTION_KEY } from '../../operator/src/store/testing.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { freePort, pollUntil, startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { requireTools, type ApiServerConnection } from './apiserver.ts'
import { kubectl } from './kube.ts'
import { sharedApiServer } from './shared.ts'

const tools = requireTools(['etcd', 'kube-apiserver', 'kubectl'])
const backends = await testBackends()
const postgres = backends.find((backend) => backend.name === 'postgres')!
const skipReason = !tools.available ? tools.reason : postgres.skip
if (skipReason) console.warn(`[test/k8s/sidecar] skipped: ${skipReason}`)

const OPERATOR_NAMESPACE = 'gatehouse-system'
const CONFIG_NAMESPACE = 'ai-config'
const APP_NAMESPACE = 'team-a'
const WAIT_MS = 30_000

interface Container {
  name: string
  image?: string
  command?: string[]
  restartPolicy?: string
  env?: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>
  volumeMounts?: Array<{ name: string; mountPath: string }>
}
interface Pod {
  metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string>; labels?: Record<string, string> }
  spec: { containers: Container[]; initContainers?: Container[]; volumes?: Array<Record<string, unknown>>; serviceAccountName?: string }
}

let server: ApiServerConnection
let simulator: Simulator
let dispose: () => Promise<void>
let directory: string
let operator: GatehouseProcess
let controlPlaneUrl: string
let sidecarPort: number
const sidecars: GatehouseProcess[] = []

async function apply(yaml: string): Promise<void> {
  const file = join(directory, `apply-${randomBytes(4).toString('hex')}.yaml`)
  await writeFile(file, yaml)
  const result = await kubectl(server, ['apply', '-f', file])
  if (result.code !== 0) throw new Error(`kubectl apply: ${result.stderr}`)
}

/** Creates a pod; resolves with the stored object, or with the refusal text. */
async function createPod(namespace: string, name: string, options: { labels?: Record<string, string>; annotations?: Record<string, string>; serviceAccount?: string; env?: Container['env']; initContainers?: Container[]; volumes?: unknown[] } = {}): Promise<{ pod: Pod | null; error: string }> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: options.labels ?? {}, annotations: options.annotations ?? {} },
    spec: {
      serviceAccountName: options.serviceAccount ?? 'app',
      ...(options.initContainers ? { initContainers: options.initContainers } : {}),
      ...(options.volumes ? { volumes: options.volumes } : {}),
      containers: [{ name: 'app', image: 'registry.example/app:1', ...(options.env ? { env: options.env } : {}) }],
    },
  }
  const file = join(directory, `${namespace}-${name}.json`)
  await writeFile(file, JSON.stringify(pod))
  const created = await kubectl(server, ['create', '-o', 'json', '-f', file])
  return created.code === 0 ? { pod: JSON.parse(created.stdout) as Pod, error: '' } : { pod: null, error: created.stderr }
}

function sidecarOf(pod: Pod): Container[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].filter((container) => container.name === 'gatehouse-sidecar')
}

function envOf(container: Container, pod: Pod): Record<string, string> {
  const env: Record<string, string> = {}
  for (const variable of container.env ?? []) {
    const field = variable.valueFrom?.fieldRef?.fieldPath
    env[variable.name] = field === 'metadata.name' ? pod.metadata.name : field === 'metadata.namespace' ? pod.metadata.namespace : (variable.value ?? '')
  }
  return env
}

async function tokenFor(pod: Pod, serviceAccount: string, audience = 'gatehouse'): Promise<string> {
  const result = await kubectl(server, [
    'create', 'token', serviceAccount, '-n', pod.metadata.namespace, '--audience', audience, '--duration', '10m',
    '--bound-object-kind', 'Pod', '--bound-object-name', pod.metadata.name, '--bound-object-uid', pod.metadata.uid,
  ])
  if (result.code !== 0) throw new Error(`kubectl create token: ${result.stderr}`)
  return result.stdout.trim()
}

/**
 * Runs the injected container's command as a process: its env as the webhook wrote it, each volume
 * mount mapped onto a temporary directory (the token file written where the projection would put
 * it), and the probe port on loopback (a pod's own network namespace is not shared here).
 */
async function runInjected(pod: Pod, token: string): Promise<{ process: GatehouseProcess; env: Record<string, string> }> {
  const [container] = sidecarOf(pod)
  const env = envOf(container!, pod)
  const root = await mkdtemp(join(directory, 'pod-'))
  for (const mount of container!.volumeMounts ?? []) {
    const local = join(root, mount.name)
    await mkdir(local, { recursive: true })
    for (const [name, value] of Object.entries(env)) env[name] = value.replace(mount.mountPath, local)
  }
  await writeFile(join(root, 'gatehouse-token', 'token'), token)
  env.GATEHOUSE_HEALTH_HOST = '127.0.0.1'
  env.GATEHOUSE_HEALTH_PORT = '0'
  expect(container!.command).toEqual(['node', 'operator/bin/gatehouse.js', 'sidecar'])
  const process = startGatehouse([container!.command![2]!], env)
  sidecars.push(process)
  return { process, env }
}

describe.skipIf(skipReason !== null)(`sidecar mode on kube-apiserver${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let injected: Pod

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-'))
    server = sharedApiServer()
    const [opened, sim] = await Promise.all([postgres.open(), startOpenAISimulator({ chunks: 2, recordLimit: 50, apiKeys: ['sk-sidecar-test'] })])
    dispose = opened.dispose
    simulator = sim
    const [operatorPort, webhookPort] = [await freePort(), await freePort()]
    sidecarPort = await freePort()
    controlPlaneUrl = `http://127.0.0.1:${operatorPort}`
    await apply(`
apiVersion: v1
kind: Namespace
metadata: { name: ${OPERATOR_NAMESPACE} }
---
apiVersion: v1
kind: Namespace
metadata: { name: ${CONFIG_NAMESPACE} }
---
apiVersion: v1
kind: Namespace
metadata: { name: ${APP_NAMESPACE}, labels: { gatehouse.dev/inject: enabled } }
---
apiVersion: v1
kind: Namespace
metadata: { name: team-b }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: app, namespace: ${APP_NAMESPACE} }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: other, namespace: ${APP_NAMESPACE} }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: app, namespace: team-b }
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: { name: gatehouse-sidecar-injector }
webhooks:
  - name: pods.sidecar.gatehouse.dev
    clientConfig: { url: "https://127.0.0.1:${webhookPort}/mutate-pods" }
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    objectSelector: { matchLabels: { gatehouse.dev/inject: "true" } }
    namespaceSelector:
      matchExpressions: [{ key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kube-public, kube-node-lease, ${OPERATOR_NAMESPACE}] }]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 10
  - name: namespaces.sidecar.gatehouse.dev
    clientConfig: { url: "https://127.0.0.1:${webhookPort}/mutate-pods" }
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    objectSelector:
      matchExpressions: [{ key: gatehouse.dev/inject, operator: NotIn, values: ["false"] }]
    namespaceSelector:
      matchLabels: { gatehouse.dev/inject: enabled }
      matchExpressions: [{ key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kube-public, kube-node-lease, ${OPERATOR_NAMESPACE}] }]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 10
`)
    await apply(`
apiVersion: v1
kind: Secret
metadata: { name: sim-credentials, namespace: ${CONFIG_NAMESPACE} }
stringData: { apiKey: sk-sidecar-test }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Workspace
metadata: { name: team-a, namespace: ${CONFIG_NAMESPACE} }
spec: { name: Team A }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Workspace
metadata: { name: team-z, namespace: ${CONFIG_NAMESPACE} }
spec: { name: Team Z }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: sim, namespace: ${CONFIG_NAMESPACE} }
spec: { kind: openai, baseUrl: "${simulator.baseUrl}", workspace: team-a, secretRef: { name: sim-credentials, key: apiKey } }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Config
metadata: { name: routing, namespace: ${CONFIG_NAMESPACE} }
spec: { workspace: team-a, config: { provider: "@sim" } }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Deployment
metadata: { name: ai, namespace: ${CONFIG_NAMESPACE} }
spec:
  type: production
  config: routing
  workspaces: [team-a, team-z]
  sidecar:
    workspace: team-a
    serviceAccounts: [{ namespace: ${APP_NAMESPACE}, name: app }]
`)
    operator = startGatehouse(['operator', '--port', String(operatorPort), '--data-dir', join(directory, 'operator')], {
      KUBECONFIG: server.kubeconfigPath,
      GATEHOUSE_DATABASE_URL: opened.url!,
      GATEHOUSE_KEY_PEPPER: randomBytes(32).toString('base64url'),
      GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      GATEHOUSE_ADMIN_API_KEY: generateApiKey('admin'),
      GATEHOUSE_WATCH_NAMESPACE: CONFIG_NAMESPACE,
      POD_NAMESPACE: OPERATOR_NAMESPACE,
      POD_NAME: 'operator-0',
      GATEHOUSE_WEBHOOK_PORT: String(webhookPort),
      GATEHOUSE_WEBHOOK_HOST: '127.0.0.1',
      GATEHOUSE_WEBHOOK_EXTRA_NAMES: '127.0.0.1',
      GATEHOUSE_SIDECAR_IMAGE: 'ghcr.io/gatehouse/gatehouse:test',
      GATEHOUSE_SIDECAR_CONTROL_PLANE_URL: controlPlaneUrl,
    })
    await operator.waitForLog((line) => line.msg === 'operator is serving', WAIT_MS)
    await operator.waitForLog((line) => line.msg === 'became the leader', WAIT_MS)
  }, 180_000)

  afterAll(async () => {
    await Promise.all(sidecars.map((sidecar) => sidecar.stop()))
    await operator?.stop()
    // The API server is shared: a webhook left behind (failurePolicy Fail, pointing at a closed
    // port) would refuse matching pods of any later suite.
    if (server) await kubectl(server, ['delete', 'mutatingwebhookconfiguration', 'gatehouse-sidecar-injector', '--ignore-not-found'])
    await dispose?.()
    await simulator?.close()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  it('keeps caBundle current: the operator made its CA and wrote it into both webhooks', async () => {
    const config = await kubectl(server, ['get', 'mutatingwebhookconfiguration', 'gatehouse-sidecar-injector', '-o', 'json'])
    const webhooks = (JSON.parse(config.stdout) as { webhooks: Array<{ clientConfig: { caBundle?: string } }> }).webhooks
    const secret = await kubectl(server, ['get', 'secret', 'gatehouse-webhook-tls', '-n', OPERATOR_NAMESPACE, '-o', 'json'])
    const data = (JSON.parse(secret.stdout) as { data: Record<string, string> }).data
    expect(Buffer.from(data['ca.crt']!, 'base64').toString()).toContain('BEGIN CERTIFICATE')
    for (const webhook of webhooks) expect(webhook.clientConfig.caBundle).toBe(data['ca.crt'])
  })

  it('injects a labelled pod: native sidecar, SDK variables, projected token and cache volumes', async () => {
    const created = await createPod('team-b', 'labelled', { labels: { 'gatehouse.dev/inject': 'true' }, annotations: { 'gatehouse.dev/deployment': 'nope/x' } })
    // team-b's service account is not bound, and the Deployment does not exist: refused first for that.
    expect(created.pod).toBeNull()
    expect(created.error).toContain('deployments.gatehouse.dev nope/x does not exist')

    const good = await createPod(APP_NAMESPACE, 'app-1', {
      labels: { 'gatehouse.dev/inject': 'true' },
      annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/ai`, 'gatehouse.dev/port': String(sidecarPort), 'gatehouse.dev/log-level': 'debug' },
    })
    expect(good.error).toBe('')
    injected = good.pod!
    const [sidecar] = injected.spec.initContainers!
    expect(sidecar).toMatchObject({ name: 'gatehouse-sidecar', restartPolicy: 'Always', image: 'ghcr.io/gatehouse/gatehouse:test' })
    const sidecarEnv = envOf(sidecar!, injected)
    expect(sidecarEnv).toMatchObject({ GATEHOUSE_SIDECAR_DEPLOYMENT: `${CONFIG_NAMESPACE}/ai`, GATEHOUSE_PORT: String(sidecarPort), GATEHOUSE_LOG_LEVEL: 'debug', GATEHOUSE_CONTROL_PLANE_URL: controlPlaneUrl })
    // No gateway token, keyring, pepper, database or provider credential anywhere in the pod.
    const text = JSON.stringify(injected)
    for (const secret of ['GATEHOUSE_GATEWAY_TOKEN', 'GATEHOUSE_ENCRYPTION_KEY', 'GATEHOUSE_KEY_PEPPER', 'GATEHOUSE_DATABASE_URL', 'sk-sidecar-test', TEST_ENCRYPTION_KEY]) expect(text).not.toContain(secret)
    const appEnv = envOf(injected.spec.containers[0]!, injected)
    expect(appEnv.OPENAI_BASE_URL).toBe(`http://127.0.0.1:${sidecarPort}/v1`)
    expect(appEnv.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${sidecarPort}`)
    const token = injected.spec.volumes!.find((volume) => volume.name === 'gatehouse-token')
    expect(token).toMatchObject({ projected: { sources: [{ serviceAccountToken: { audience: 'gatehouse', path: 'token' } }] } })
    expect(injected.spec.volumes!.find((volume) => volume.name === 'gatehouse-cache')).toMatchObject({ emptyDir: { medium: 'Memory' } })
    expect(injected.metadata.annotations?.['gatehouse.dev/injected']).toBe(`${CONFIG_NAMESPACE}/ai`)
  })

  it('injects once when both webhooks match and when an injected pod is admitted again; keeps the app’s own base URL', async () => {
    // app-1 matched the pod-label webhook and the namespace-label webhook: one sidecar.
    expect(sidecarOf(injected)).toHaveLength(1)
    const copy = await createPod(APP_NAMESPACE, 'app-copy', {
      labels: { 'gatehouse.dev/inject': 'true' },
      annotations: injected.metadata.annotations!,
      initContainers: injected.spec.initContainers!,
      volumes: injected.spec.volumes!,
      env: [{ name: 'OPENAI_BASE_URL', value: 'http://127.0.0.1:9/v1' }],
    })
    expect(copy.error).toBe('')
    expect(sidecarOf(copy.pod!)).toHaveLength(1)
    const own = await createPod(APP_NAMESPACE, 'own-url', {
      annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/ai` },
      env: [{ name: 'OPENAI_BASE_URL', value: 'https://proxy.example/v1' }],
    })
    expect(sidecarOf(own.pod!)).toHaveLength(1)
    const ownEnv = envOf(own.pod!.spec.containers[0]!, own.pod!)
    expect(ownEnv.OPENAI_BASE_URL).toBe('https://proxy.example/v1')
    expect(ownEnv.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:8787')
  })

  it('leaves unlabelled pods, opted-out pods and kube-system pods untouched', async () => {
    const plain = await createPod('team-b', 'plain', { annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/ai` } })
    const optedOut = await createPod(APP_NAMESPACE, 'opted-out', { labels: { 'gatehouse.dev/inject': 'false' } })
    const system = await createPod('kube-system', 'system', { labels: { 'gatehouse.dev/inject': 'true' }, annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/ai` } })
    for (const { pod, error } of [plain, optedOut, system]) {
      expect(error).toBe('')
      expect(pod!.spec.initContainers ?? []).toHaveLength(0)
      expect(pod!.spec.volumes ?? []).toHaveLength(0)
      expect(pod!.spec.containers[0]!.env ?? []).toHaveLength(0)
    }
  })

  it('refuses bad annotations with a message naming the problem', async () => {
    const missing = await createPod(APP_NAMESPACE, 'missing', { annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/no-such` } })
    expect(missing.pod).toBeNull()
    expect(missing.error).toContain(`gatehouse.dev/deployment: deployments.gatehouse.dev ${CONFIG_NAMESPACE}/no-such does not exist`)
    const port = await createPod(APP_NAMESPACE, 'bad-port', { annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/ai`, 'gatehouse.dev/port': '80' } })
    expect(port.error).toContain("gatehouse.dev/port: '80' is not a port")
    const unbound = await createPod(APP_NAMESPACE, 'unbound', { serviceAccount: 'other', annotations: { 'gatehouse.dev/deployment': `${CONFIG_NAMESPACE}/ai` } })
    expect(unbound.error).toContain(`does not admit service account ${APP_NAMESPACE}/other`)
    const none = await createPod(APP_NAMESPACE, 'no-deployment', {})
    expect(none.error).toContain('gatehouse.dev/deployment is required')
    for (const name of ['missing', 'bad-port', 'unbound', 'no-deployment']) {
      expect((await kubectl(server, ['get', 'pod', name, '-n', APP_NAMESPACE])).code).not.toBe(0)
    }
  })

  it('runs the injected command with a TokenRequest token: admitted by TokenReview, serves the bound workspace to the OpenAI SDK', async () => {
    const { process, env } = await runInjected(injected, await tokenFor(injected, 'app'))
    const serving = await process.waitForLog((line) => line.msg === 'sidecar is serving', WAIT_MS)
    expect(serving.url).toBe(`http://127.0.0.1:${sidecarPort}`)
    // The identity comes from the TokenReview of the pod-bound token, not from the pod's own claims.
    const admitted = await process.waitForLog((line) => line.msg === 'admitted by the control plane', WAIT_MS)
    expect(admitted.identity).toMatchObject({ namespace: APP_NAMESPACE, serviceAccount: 'app', podName: 'app-1' })
    await pollUntil(async () => (await fetch(`${serving.health as string}/readyz`)).status === 200, WAIT_MS, 50)

    const appEnv = envOf(injected.spec.containers[0]!, injected)
    // Only what the webhook wrote: the base URL and the placeholder the SDK insists on.
    const client = new OpenAI({ baseURL: appEnv.OPENAI_BASE_URL, apiKey: appEnv.OPENAI_API_KEY, maxRetries: 0 })
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the pod' }] })
    expect(answer.choices[0]!.message.content).toBeTruthy()
    const upstream = simulator.requests.at(-1)!
    expect(upstream.headers.authorization).toBe('Bearer sk-sidecar-test')
    expect(JSON.stringify(upstream.body)).toContain('hello from the pod')
    expect(env.GATEHOUSE_SIDECAR_TOKEN_FILE).not.toContain('/var/run/secrets')

    // The slice holds the bound workspace only (team-z is served by the Deployment, not bound).
    const models = await fetch(`${appEnv.OPENAI_BASE_URL}/models`)
    expect(models.status).toBe(200)
  }, 60_000)

  it('refuses tokens of an unbound service account, of another audience, and garbage', async () => {
    const other = await createPod(APP_NAMESPACE, 'other-sa', { labels: { 'gatehouse.dev/inject': 'false' }, serviceAccount: 'other' })
    const stream = async (token: string) => {
      const response = await fetch(`${controlPlaneUrl}${SIDECAR_STREAM_PATH}?deployment=${CONFIG_NAMESPACE}/ai&after=-1`, {
        headers: { authorization: `Bearer ${token}`, [SIDECAR_KEY_HEADER]: sidecarKeyPair().publicKey },
      })
      return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } }
    }
    const unbound = await stream(await tokenFor(other.pod!, 'other'))
    expect(unbound.status).toBe(403)
    expect(unbound.body.error.message).toContain(`does not admit service account ${APP_NAMESPACE}/other`)
    const audience = await stream(await tokenFor(injected, 'app', 'https://kubernetes.default.svc'))
    expect(audience.status).toBe(401)
    const garbage = await stream('not-a-token')
    expect(garbage).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } })

    // The injected command with the unbound token never becomes ready and serves nothing.
    const podLike: Pod = { ...injected, metadata: { ...other.pod!.metadata }, spec: { ...injected.spec } }
    const { process } = await runInjected({ ...podLike, spec: { ...podLike.spec, initContainers: [{ ...injected.spec.initContainers![0]!, env: injected.spec.initContainers![0]!.env!.map((v) => (v.name === 'GATEHOUSE_PORT' ? { name: v.name, value: '0' } : v)) }] } }, await tokenFor(other.pod!, 'other'))
    const serving = await process.waitForLog((line) => line.msg === 'sidecar is serving', WAIT_MS)
    await process.waitForLog((line) => String(line.err ?? '').includes('HTTP 403'), WAIT_MS)
    expect((await fetch(`${serving.health as string}/readyz`)).status).toBe(503)
    const refused = await fetch(`${serving.url!}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}' })
    expect(refused.status).toBe(503)
  }, 60_000)
})
