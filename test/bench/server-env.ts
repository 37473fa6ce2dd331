/**
 * How the benchmark starts the servers it measures, Gatehouse and the bare Node proxy alike: as the
 * image starts Gatehouse, so their resident memory is the one a deployment sees and the two are
 * compared on the same terms.
 *  - the servers' V8 flags (SERVER_NODE_FLAGS) on the command line;
 *  - the image's environment (SERVER_ENV: glibc's malloc arenas);
 *  - a warm compile cache (NODE_COMPILE_CACHE). The image warms one at build time, so a served
 *    process never loads Node's TypeScript stripper; without it every `.ts` process here did, about
 *    10 to 15 MB resident (its WebAssembly module and a 3.6 MB source string in the heap).
 *    `warmCompileCache` starts each server once to fill the cache before the measured start.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../operator/src/cli/node-flags.ts'
import { startNode, stopAll } from './processes.ts'

/** Kept between runs (bench-results/ is ignored by git); Node keys its entries by its version and V8 flags. */
export function compileCacheDir(root: string): string {
  return join(root, 'bench-results', '.node-compile-cache')
}

/** The environment of a process that must not trace: no OTEL_* from the caller's shell. */
export function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')))
}

/** The environment of a measured server: the image's, tracing off. */
export function serverEnv(root: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...withoutOtel(env), ...SERVER_ENV, NODE_COMPILE_CACHE: compileCacheDir(root) }
}

/** `node` arguments of a measured server running `script`. */
export function serverArgs(script: string, args: readonly string[]): string[] {
  return [...SERVER_NODE_FLAGS, script, ...args]
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
