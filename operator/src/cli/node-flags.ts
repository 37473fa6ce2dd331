/**
 * V8 flags Gatehouse's servers start with (docs/operations.md, "Memory"). None can be set from
 * inside a running process: V8 sizes its heap and picks its WebAssembly compilers when it starts,
 * and Node refuses these flags in NODE_OPTIONS. So the `node` command line carries them: the
 * Dockerfile's entrypoint, `make run` and the benchmark's gateway; node-flags.test.ts keeps those
 * in step with these lists. Node keeps a compile cache per set of V8 flags, so the Dockerfile
 * warms one with these too.
 */

/**
 * Every server. 4 MB semi-spaces instead of V8's 64 MB on a large machine (under 50 connections
 * the young generation filled and held 128 MB). The young generation is both semi-spaces, so this
 * holds 8 MB of it resident; smaller costs scavenges. Measured on 2026-11-28 under `make bench`'s
 * load (RSS under load over one repetition of sat to prompt-sat; garbage-collector instructions
 * per request under callgrind, 50 connections): 16 MB 180-194 MB and 11-13 k, 8 MB 142-157 MB
 * and 18-72 k, 4 MB 139-144 MB and 38 k, of about 610 to 650 k instructions per request: 4 MB
 * costs about 4 % more CPU than 16 MB for 40 to 50 MB less. (An earlier run found 2 MB 30 %
 * dearer in CPU time, with the old generation unbounded; docs/operations.md "Memory".)
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4']

/**
 * Environment of every server in the image (the Dockerfile's `ENV`). glibc gives each thread that
 * allocates while another holds the lock an arena of its own, up to 8 per core, and keeps what is
 * freed there resident: V8's compiler and GC threads left four to five arenas of 3 to 16 MB each
 * under `make bench`'s load. Two arenas cut the gateway's RSS under load by about 15 MB.
 */
export const SERVER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' }

/**
 * `start` on the embedded PGlite database, instead. V8's optimising WebAssembly compiler held 300
 * to 500 MB compiling PGlite's 9 MB module (peaks above 700 MB); its baseline compiler alone keeps
 * a PGlite process at about 150 MB. The embedded process trades CPU for memory where a server does
 * not: 2 MB semi-spaces and V8's memory-saving heap growth keep `make run` near 200 MB (with the
 * 16 MB semi-spaces it held 245 to 270 MB), at about twice the CPU per request.
 */
export const EMBEDDED_NODE_FLAGS: readonly string[] = ['--liftoff-only', '--max-semi-space-size=2', '--optimize-for-size']

/** The flags of `wanted` this process was not started with (its command line and NODE_OPTIONS). */
export function missingNodeFlags(wanted: readonly string[], execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)])
  return wanted.filter((flag) => !given.has(flag))
}
