/**
 * `gatehouse gateway` as a process: it listens where --host/--port say (not only where the
 * environment does), serves /metrics on its own port and not on the data-plane port, and on
 * SIGTERM fails readiness first while it keeps serving, then exits.
 */
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { buildSnapshot, TEST_PEPPER } from '../helpers/gateway.ts'
import { pollUntil, startGatehouse } from '../helpers/processes.ts'

let directory: string
let snapshotFile: string

/** A loopback port free right now (the process binds it a moment later). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-gateway-process-'))
  snapshotFile = join(directory, 'snapshot.json')
  const snapshot = buildSnapshot([], { workspaceKey: generateApiKey('workspace'), adminKey: generateApiKey('admin') })
  await writeFile(snapshotFile, JSON.stringify(snapshot))
})

afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true })
})

describe('gatehouse gateway', () => {
  it('listens on --host/--port over GATEHOUSE_PORT, /metrics on --metrics-port only, and drains on SIGTERM', async () => {
    const [port, metricsPort, envPort] = [await freePort(), await freePort(), await freePort()]
    const gateway = startGatehouse(['gateway', '--host', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort)], {
      GATEHOUSE_KEY_PEPPER: TEST_PEPPER,
      GATEHOUSE_SNAPSHOT_FILE: snapshotFile,
      GATEHOUSE_PORT: String(envPort),
      GATEHOUSE_SHUTDOWN_DELAY_MS: '1500',
    })
    try {
      const line = await gateway.waitForLog((entry) => entry.msg === 'gateway is serving', 60_000)
      expect(line.url).toBe(`http://127.0.0.1:${port}`)
      expect(line.metricsUrl).toBe(`http://127.0.0.1:${metricsPort}`)
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404)
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(metrics.status).toBe(200)
      expect(await metrics.text()).toContain('gatehouse_process_resident_memory_bytes')

      gateway.child.kill('SIGTERM')
      await pollUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 503, 1000, 20)
      // Still serving during the drain window.
      expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200)
      await exitOf(gateway.child)
      expect(gateway.child.exitCode).toBe(0)
    } finally {
      await gateway.stop()
    }
  }, 90_000)

  it('a port in use is named with the flag that changes it', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      const gateway = startGatehouse(['gateway', '--port', String(port)], { GATEHOUSE_KEY_PEPPER: TEST_PEPPER, GATEHOUSE_SNAPSHOT_FILE: snapshotFile })
      await exitOf(gateway.child)
      expect(gateway.child.exitCode).toBe(1)
      expect(gateway.output.join('\n')).toContain(`gatehouse: 127.0.0.1:${port} is already in use: stop what listens there, or choose another with --port`)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  }, 90_000)
})
