import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { SERVER_ALLOCATOR_PATH, SERVER_NODE_FLAGS } from '../../operator/src/cli/node-flags.ts'
import { SIDECAR_ENV } from '../../operator/src/webhook/inject.ts'
import { CHART_GATEWAY_MEMORY_LIMIT_MIB, CONTAINER_HEAP_FLAGS, serverAllocator, serverEnv, serverNodeFlags } from './server-env.ts'

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

describe('the servers\' allocator', () => {
  it('is the image\'s path first, then Debian\'s library directories, else none (glibc\'s malloc)', () => {
    const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64'
    expect(serverAllocator((path) => path === SERVER_ALLOCATOR_PATH || path.startsWith('/usr/lib/'))).toBe(SERVER_ALLOCATOR_PATH)
    expect(serverAllocator((path) => path.startsWith('/lib/'))).toBe(`/lib/${arch}-linux-gnu/libjemalloc.so.2`)
    expect(serverAllocator(() => false)).toBeNull()
  })

  // The servers' V8 flags and heap, jemalloc preloaded as the image does (the bench's measured
  // servers start so): Node runs on it, allocation-heavy work included, and maps it; the sidecar's
  // environment keeps glibc's. Where Debian's libjemalloc2 is not installed there is nothing to run.
  const allocator = serverAllocator()
  it.skipIf(allocator === null)('runs Node with jemalloc mapped, and the sidecar\'s environment without it', () => {
    const script = [
      "const parts = []",
      "for (let index = 0; index < 20000; index++) parts.push(Buffer.from(JSON.stringify({ index, text: 'x'.repeat(index % 700) })))",
      "process.stdout.write(String(Buffer.concat(parts).length) + ' ' + require('node:fs').readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc'))",
    ].join('\n')
    const run = (env: NodeJS.ProcessEnv): string => execFileSync(process.execPath, [...SERVER_NODE_FLAGS, ...CONTAINER_HEAP_FLAGS, '-e', script], { env, encoding: 'utf8' })
    const server = serverEnv(process.cwd(), { PATH: process.env.PATH })
    expect(server.LD_PRELOAD).toBe(allocator)
    expect(run(server)).toMatch(/^\d+ true$/)
    expect(run({ ...server, ...SIDECAR_ENV })).toMatch(/^\d+ false$/)
  })
  if (allocator === null) console.warn('libjemalloc.so.2 is not installed here: the test of Node on the image\'s allocator is skipped')
})
