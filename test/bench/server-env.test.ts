import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { SERVER_NODE_FLAGS } from '../../operator/src/cli/node-flags.ts'
import { CHART_GATEWAY_MEMORY_LIMIT_MIB, CONTAINER_HEAP_FLAGS, serverNodeFlags } from './server-env.ts'

// The bench's servers get the heap the chart's gateway container would give them; when the
// chart's limit moves, the bench's must move with it. Break tried: 1Gi in values.yaml failed it.
describe('bench servers as the chart runs the gateway', () => {
  it('use the memory limit of the chart\'s gateway', async () => {
    const values = parse(await readFile(new URL('../../charts/gatehouse/values.yaml', import.meta.url), 'utf8')) as { gateway: { resources: { limits: { memory: string } } } }
    expect(values.gateway.resources.limits.memory).toBe(`${CHART_GATEWAY_MEMORY_LIMIT_MIB}Mi`)
    expect(CONTAINER_HEAP_FLAGS).toEqual([`--max-old-space-size=${CHART_GATEWAY_MEMORY_LIMIT_MIB / 2}`])
  })
})

describe('the servers\' V8 flags', () => {
  it('are the image\'s unless BENCH_SERVER_NODE_FLAGS replaces them for every server alike', () => {
    expect(serverNodeFlags({})).toEqual(SERVER_NODE_FLAGS)
    expect(serverNodeFlags({ BENCH_SERVER_NODE_FLAGS: ' --max-semi-space-size=16  --foo ' })).toEqual(['--max-semi-space-size=16', '--foo'])
  })
})
