/**
 * The load generator's alternating job (load.ts): targets take turns, each gets its share of the
 * load and its own results, and a process every target uses is split by turns. Two loopback
 * servers in this process stand in for the targets. No timing is asserted beyond each target
 * having been loaded for the time it was given.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAlternating, type TargetRequest } from './load.ts'

const servers: Server[] = []
const served = new Map<string, number>()
/** Which server answered each request, in order. */
const order: string[] = []

async function listen(name: string): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      served.set(name, (served.get(name) ?? 0) + 1)
      if (order.at(-1) !== name) order.push(name)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const targets: TargetRequest[] = []

beforeAll(async () => {
  for (const name of ['first', 'second']) targets.push({ origin: await listen(name), path: '/', headers: { 'content-type': 'application/json' }, body: '{}' })
})

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
})

describe('runAlternating', () => {
  it('loads the targets in turns, each for its duration, and splits a shared process by turns', async () => {
    const results = await runAlternating({
      mode: 'alternating',
      targets: targets.map((target) => ({ target, watch: [] })),
      shared: [{ name: 'shared', pid: process.pid }],
      connections: 2,
      sliceMs: 50,
      warmupMs: 0,
      durationMs: 200,
      stream: false,
    })
    expect(results).toHaveLength(2)
    // Four turns each: first, second, first, second...
    expect(order).toEqual(['first', 'second', 'first', 'second', 'first', 'second', 'first', 'second'])
    for (const [index, result] of results.entries()) {
      expect(result.requests).toBe(served.get(index === 0 ? 'first' : 'second'))
      expect(result.errors + result.non2xx).toBe(0)
      expect(result.windowS).toBeGreaterThanOrEqual(0.2)
      expect(result.processes.map((usage) => usage.name)).toEqual(['shared'])
      expect(result.processes[0]!.cpuMs).not.toBeNull()
    }
  })
})
