/**
 * Control-plane traces for real: a control plane process on PostgreSQL and a gateway process, both
 * exporting OTLP http/json to a receiver on loopback (only OTEL_* set, as the chart does). An admin
 * change made with a caller's `traceparent` must show up as: the admin request's SERVER span in the
 * caller's trace, a `snapshot.publish` span linked to it, and the gateway's `snapshot.ack` span
 * linked to that publish, carrying how long the change took to reach the gateway.
 *
 * Break tried: dropping `snapshotTracing.requested()` from SnapshotPublisher.publish left the
 * publish span without links, and the "linked to the admin request" check failed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { testBackends, TEST_ENCRYPTION_KEY } from '../../operator/src/store/testing.ts'
import { startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'

const backends = await testBackends()
const postgres = backends.find((backend) => backend.name === 'postgres')!

const ADMIN_KEY = generateApiKey('admin')
let directory: string
let receiver: OtlpReceiver
let dispose: (() => Promise<void>) | undefined
let controlPlane: GatehouseProcess | undefined
let gateway: GatehouseProcess | undefined
let controlPlaneUrl: string

describe.skipIf(postgres.skip !== null)('control-plane spans', () => {
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-cp-tracing-'))
    receiver = await startOtlpReceiver()
    const opened = await postgres.open()
    dispose = opened.dispose
    const common = {
      GATEHOUSE_KEY_PEPPER: randomBytes(32).toString('base64url'),
      GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      GATEHOUSE_GATEWAY_TOKEN: randomBytes(24).toString('base64url'),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    }
    controlPlane = startGatehouse(['control-plane', '--port', '0', '--data-dir', join(directory, 'cp')], { ...common, GATEHOUSE_DATABASE_URL: opened.url!, GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY })
    controlPlaneUrl = (await controlPlane.waitForLog((entry) => entry.msg === 'control plane is serving', 120_000)).url!
    gateway = startGatehouse(['gateway'], { ...common, GATEHOUSE_PORT: '0', GATEHOUSE_CONTROL_PLANE_URL: controlPlaneUrl, GATEHOUSE_GATEWAY_ID: 'gw-traced' })
    // Generous: loading the OpenTelemetry SDK adds seconds to a start on a busy machine.
    await gateway.waitForLog((entry) => entry.msg === 'gateway is serving', 120_000)
  }, 300_000)

  afterAll(async () => {
    await gateway?.stop()
    await controlPlane?.stop()
    await dispose?.()
    await receiver?.close()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  it('an admin change: request span in the caller\'s trace, publish linked to it, the gateway ACK linked to the publish', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c'
    const response = await fetch(`${controlPlaneUrl}/v1/admin/workspaces`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      body: JSON.stringify({ name: 'Traced', slug: 'traced' }),
    })
    expect(response.status).toBe(200)

    const spans = await receiver.waitFor((all) => {
      const request = all.find((span) => span.traceId === traceId && span.kind === SPAN_KIND.server)
      const publish = request && all.find((span) => span.name === 'snapshot.publish' && span.links.some((link) => link.spanId === request.spanId))
      return publish !== undefined && all.some((span) => span.name === 'snapshot.ack' && span.links.some((link) => link.spanId === publish.spanId))
    }, 60_000)
    const request = spans.find((span) => span.traceId === traceId && span.kind === SPAN_KIND.server)!
    expect(request.name).toBe('POST /v1/admin/workspaces')
    expect(request.parentSpanId).toBe('b7ad6b7169203331')
    expect(request.attributes['http.response.status_code']).toBe(200)
    expect(request.resource['service.name']).toBe('gatehouse-control-plane')

    const publish = spans.find((span) => span.name === 'snapshot.publish' && span.links.some((link) => link.spanId === request.spanId))!
    const generation = publish.attributes['gatehouse.snapshot.generation']
    expect(typeof generation).toBe('number')

    const ack = spans.find((span) => span.name === 'snapshot.ack' && span.links.some((link) => link.spanId === publish.spanId))!
    expect(ack.attributes).toMatchObject({ 'gatehouse.gateway.id': 'gw-traced', 'gatehouse.snapshot.generation': generation, 'gatehouse.snapshot.status': 'ack' })
    expect(ack.attributes['gatehouse.snapshot.propagation_ms']).toBeGreaterThanOrEqual(0)
    expect(ack.attributes['gatehouse.snapshot.change_to_ack_ms']).toBeGreaterThanOrEqual(ack.attributes['gatehouse.snapshot.propagation_ms'] as number)

    // The ACK itself arrived as a request to the control plane's sync route: a server span there too.
    expect(spans.some((span) => span.name === 'POST /v1/gateway-sync/acks' && span.kind === SPAN_KIND.server && span.attributes['http.response.status_code'] === 204)).toBe(true)
  }, 120_000)
})
