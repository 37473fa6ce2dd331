/**
 * How the benchmark starts the servers it measures, Gatehouse and the bare Node proxy alike: as the
 * image starts Gatehouse, so their resident memory is the one a deployment sees and the two are
 * compared on the same terms.
 *  - the servers' V8 flags (SERVER_NODE_FLAGS) on the command line; BENCH_SERVER_NODE_FLAGS replaces
 *    them for every measured server alike, for an A/B of a flag (`--max-semi-space-size=16`);
 *  - the heap a container of the chart's gateway would give it (CONTAINER_HEAP_FLAGS);
 *  - the image's environment (SERVER_ENV: the allocators' settings) and its allocator, jemalloc
 *    preloaded (`serverAllocator`: where this machine has Debian's libjemalloc2);
 *  - a warm compile cache (NODE_COMPILE_CACHE). The image warms one at build time, so a served
 *    process never loads Node's TypeScript stripper; without it every `.ts` process here did, about
 *    10 to 15 MB resident (its WebAssembly module and a 3.6 MB source string in the heap).
 *    `warmCompileCache` starts each server once to fill the cache before the measured start.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { SERVER_ALLOCATOR_PATH, SERVER_ENV, SERVER_NODE_FLAGS } from '../../operator/src/cli/node-flags.ts'
import { bundle } from '../../operator/scripts/bundle.ts'
import { startNode, stopAll } from './processes.ts'

/** The chart's gateway memory limit (charts/gatehouse/values.yaml gateway.resources.limits.memory; server-env.test.ts). */
export const CHART_GATEWAY_MEMORY_LIMIT_MIB = 512

/**
 * In a container Node sizes V8's old generation from the cgroup's memory limit, half of it (in a
 * 512 MiB cgroup heap_size_limit read 280 MB: 256 + 3 × 8 MB of young generation), and V8 lets
 * the old generation grow by a smaller factor before a major collection the smaller that maximum
 * is. On the bench machine (24 GB, no limit) the maximum is 4 GB: garbage promoted under load
 * (about 450 B per request, undici's timers the most) waited in a 40 to 60 MB old space for its
 * first major collection, where in a 512 MiB cgroup it was collected near 30 MB. This flag gives
 * the measured servers the heap the chart's container gives the gateway; the image sets nothing,
 * so a deployment with another limit keeps the heap Node derives from it.
 */
export const CONTAINER_HEAP_FLAGS: readonly string[] = [`--max-old-space-size=${CHART_GATEWAY_MEMORY_LIMIT_MIB / 2}`]

/** Kept between runs (bench-results/ is ignored by git); Node keys its entries by its version and V8 flags. */
export function compileCacheDir(root: string): string {
  return join(root, 'bench-results', '.node-compile-cache')
}

/**
 * The script a bench process runs, as the image runs Gatehouse: `entry` of the production build of
 * `entries` (operator/scripts/bundle.ts, bundled and minified into bench-results/`outName`).
 * BENCH_FROM_SOURCES=1 runs the TypeScript source of `entry` instead (a CPU profile then names
 * source files and lines).
 */
export async function builtOrSources(root: string, outName: string, entries: Record<string, string>, entry: string): Promise<string> {
  if (process.env.BENCH_FROM_SOURCES === '1') return entries[entry]!
  return (await bundle(join(root, 'bench-results', outName), entries)).entries[entry]!
}

let gatewayScript: Promise<string> | undefined

/** The bench gateway's script (test/bench/gateway-process.ts), built once per process. */
export function benchGatewayScript(root: string): Promise<string> {
  gatewayScript ??= builtOrSources(root, 'dist-bench', { 'gateway-process': join(root, 'test/bench/gateway-process.ts') }, 'gateway-process')
  return gatewayScript
}

/** The environment of a process that must not trace: no OTEL_* from the caller's shell. */
export function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')))
}

/** Debian's directory of shared libraries for this machine's architecture. */
const MULTIARCH_DIRECTORY = `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`

/**
 * The library the image preloads into its servers (jemalloc, SERVER_ALLOCATOR_PATH) on this
 * machine: at the image's path, or in Debian's library directories (libjemalloc2, which Debian's
 * redis-server also installs). Null where it is absent: the servers then run on glibc's malloc,
 * whose resident memory under load is not the image's (describeServerRuntime says so).
 */
export function serverAllocator(exists: (path: string) => boolean = existsSync): string | null {
  const candidates = [SERVER_ALLOCATOR_PATH, ...['/usr/lib', '/lib'].map((directory) => `${directory}/${MULTIARCH_DIRECTORY}/libjemalloc.so.2`)]
  return candidates.find((path) => exists(path)) ?? null
}

/** The environment of a measured server: the image's (its allocator preloaded where this machine has it), tracing off. */
export function serverEnv(root: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const allocator = serverAllocator()
  return { ...withoutOtel(env), ...SERVER_ENV, ...(allocator === null ? {} : { LD_PRELOAD: allocator }), NODE_COMPILE_CACHE: compileCacheDir(root) }
}

/** The measured servers' V8 flags: the image's, or BENCH_SERVER_NODE_FLAGS (space-separated) when set. */
export function serverNodeFlags(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const override = env.BENCH_SERVER_NODE_FLAGS
  return override === undefined ? SERVER_NODE_FLAGS : override.split(' ').filter(Boolean)
}

/** `node` arguments of a measured server running `script` (with `nodeFlags` instead of the servers' V8 flags: an A/B). */
export function serverArgs(script: string, args: readonly string[], nodeFlags: readonly string[] = serverNodeFlags()): string[] {
  return [...nodeFlags, ...CONTAINER_HEAP_FLAGS, script, ...args]
}

/** `node` arguments of the bare Node proxy (bare-proxy.ts) relaying to `upstreamUrl`, started as a measured server. */
export function bareProxyArgs(root: string, upstreamUrl: string, nodeFlags: readonly string[] = serverNodeFlags()): string[] {
  return serverArgs(join(root, 'test/bench/bare-proxy.ts'), ['--upstream', upstreamUrl], nodeFlags)
}

/** One line for the run's header: how every measured server runs. */
export function describeServerRuntime(): string {
  const env = Object.entries(SERVER_ENV).map(([name, value]) => `${name}=${value}`).join(' ')
  const allocator = serverAllocator()
  const preload = allocator === null ? 'glibc\'s malloc (no libjemalloc.so.2 here: the image preloads it, so RSS under load is not the image\'s)' : `LD_PRELOAD=${allocator}`
  return `servers (bare proxy and Gatehouse alike): node ${[...serverNodeFlags(), ...CONTAINER_HEAP_FLAGS].join(' ')} (old generation as in a ${CHART_GATEWAY_MEMORY_LIMIT_MIB} MiB container), ${preload}, ${env}, warm compile cache`
}

/**
 * Starts each server once and stops it, so the measured processes start on a warm compile cache.
 * A server writes its cache entries when it exits (both stop through `process.exit`); the upstream
 * is never called. Must run before any other bench process is started: it stops every child.
 */
export async function warmCompileCache(root: string, servers: ReadonlyArray<{ name: string; args: string[] }>): Promise<void> {
  mkdirSync(compileCacheDir(root), { recursive: true })
  await Promise.all(servers.map((server) => startNode(`${server.name} (compile cache warm-up)`, server.args, { env: serverEnv(root), timeoutMs: 120_000 })))
  await stopAll()
}
