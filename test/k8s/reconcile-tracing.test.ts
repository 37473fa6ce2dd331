/**
 * Reconcile spans for real: a `gatehouse operator` process on the shared kube-apiserver and
 * PostgreSQL, a `gatehouse gateway` process subscribed to it, both exporting OTLP http/json to a
 * receiver on loopback (only OTEL_* set, as the chart does). Applying a CR must show up as a
 * `reconcile {Kind}` span naming the object, a `snapshot.publish` span linked to that reconcile,
 * and the gateway's `snapshot.ack` span linked to the publish: the answer to "why did my change
 * take 3 s" for a change made with kubectl rather than the admin API.
 *
 * Break tried: running the reconcile outside its span's context (`run()` instead of
 * `context.with(..., run)` in telemetry/spans.ts reconcileSpan) left the publish span without a
 * link to the reconcile, and the wait below timed out.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { GROUP, VERSION } from '../../crds/src/index.ts'
import { testBackends, TEST_ENCRYPTION_KEY } from '../../operator/src/store/testing.ts'
import { startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'
import { requireTools } from './apiserver.ts'
import { sharedApiServer } from './shared.ts'

const tools = requireTools(['etcd', 'kube-apiserver', 'kubectl'])
const backends = await testBackends()
const postgres = backends.find((backend) => backend.name === 'postgres')!
const skipReason = !tools.available ? tools.reason : postgres.skip

/** Its own namespace on the shared API server; the operator watches only this one. */
const NAMESPACE = 'gatehouse-reconcile-tracing'
const START_MS = 120_000

let directory: string
let receiver: OtlpReceiver
let dispose: (() => Promise<void>) | undefined
let operator: GatehouseProcess | undefined
let gateway: GatehouseProcess | undefined

describe.skipIf(skipReason !== null)(`reconcile spans on kube-apiserver${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  beforeAll(async () => {
    const server = sharedApiServer()
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-reconcile-tracing-'))
    const [opened, started] = await Promise.all([postgres.open(), startOtlpReceiver()])
    dispose = opened.dispose
    receiver = started
    await server.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } })
    const common = {
      GATEHOUSE_KEY_PEPPER: randomBytes(32).toString('base64url'),
      GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      GATEHOUSE_GATEWAY_TOKEN: randomBytes(24).toString('base64url'),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    }
    operator = startGatehouse(['operator', '--port', '0', '--data-dir', join(directory, 'operator')], {
      ...common,
      KUBECONFIG: server.kubeconfigPath,
      GATEHOUSE_DATABASE_URL: opened.url!,
      GATEHOUSE_ADMIN_API_KEY: generateApiKey('admin'),
      GATEHOUSE_WATCH_NAMESPACE: NAMESPACE,
      POD_NAMESPACE: NAMESPACE,
      POD_NAME: 'operator-traced',
    })
    const serving = await operator.waitForLog((entry) => entry.msg === 'operator is serving', START_MS)
    await operator.waitForLog((entry) => entry.msg === 'became the leader', START_MS)
    gateway = startGatehouse(['gateway'], { ...common, GATEHOUSE_PORT: '0', GATEHOUSE_CONTROL_PLANE_URL: serving.url!, GATEHOUSE_GATEWAY_ID: 'gw-reconcile-traced' })
    // Generous: loading the OpenTelemetry SDK adds seconds to a start on a busy machine.
    await gateway.waitForLog((entry) => entry.msg === 'gateway is serving', START_MS)
  }, 300_000)

  afterAll(async () => {
    await gateway?.stop()
    await operator?.stop()
    await dispose?.()
    await receiver?.close()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  it('a CR apply: a reconcile span naming the object, the snapshot publish linked to it, the gateway ACK linked to the publish', async () => {
    const custom = sharedApiServer().kubeConfig.makeApiClient(CustomObjectsApi)
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: 'workspaces',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Workspace', metadata: { name: 'traced-team', namespace: NAMESPACE }, spec: { name: 'Traced team' } },
    })

    const isReconcile = (span: ReceivedSpan): boolean => span.name === 'reconcile Workspace' && span.attributes['gatehouse.resource.name'] === 'traced-team'
    const publishOf = (all: ReceivedSpan[], reconcile: ReceivedSpan) =>
      all.find((span) => span.name === 'snapshot.publish' && span.links.some((link) => link.spanId === reconcile.spanId && link.traceId === reconcile.traceId))
    const ackOf = (all: ReceivedSpan[], publish: ReceivedSpan) =>
      all.find((span) => span.name === 'snapshot.ack' && span.links.some((link) => link.spanId === publish.spanId))
    const spans = await receiver.waitFor((all) => {
      // The first reconcile may only add the finalizer; the one that writes the row is linked.
      const linked = all.filter(isReconcile).map((reconcile) => publishOf(all, reconcile)).find((publish) => publish !== undefined)
      return linked !== undefined && ackOf(all, linked) !== undefined
    }, 60_000)

    const reconcile = spans.filter(isReconcile).find((candidate) => publishOf(spans, candidate) !== undefined)!
    expect(reconcile.kind).toBe(SPAN_KIND.internal)
    expect(reconcile.attributes).toMatchObject({ 'k8s.namespace.name': NAMESPACE, 'gatehouse.resource.kind': 'Workspace', 'gatehouse.resource.name': 'traced-team' })
    expect(reconcile.status.code ?? 0).not.toBe(2)
    expect(reconcile.resource['service.name']).toBe('gatehouse-operator')

    const publish = publishOf(spans, reconcile)!
    const generation = publish.attributes['gatehouse.snapshot.generation']
    expect(typeof generation).toBe('number')
    const ack = ackOf(spans, publish)!
    expect(ack.attributes).toMatchObject({ 'gatehouse.gateway.id': 'gw-reconcile-traced', 'gatehouse.snapshot.generation': generation, 'gatehouse.snapshot.status': 'ack' })
    expect(ack.attributes['gatehouse.snapshot.change_to_ack_ms']).toBeGreaterThanOrEqual(ack.attributes['gatehouse.snapshot.propagation_ms'] as number)
  }, 120_000)
})
