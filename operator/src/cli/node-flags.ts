/**
 * V8 flags Gatehouse's servers start with (docs/operations.md, "Memory"). None can be set from
 * inside a running process: V8 sizes its heap and picks its WebAssembly compilers when it starts,
 * and Node refuses these flags in NODE_OPTIONS. So the `node` command line carries them: the
 * Dockerfile's entrypoint, `make run` and the benchmark's gateway; node-flags.test.ts keeps those
 * in step with these lists. Node keeps a compile cache per set of V8 flags, so the Dockerfile
 * warms one with these too. CPU costs of the flags were not measured on a quiet machine.
 */

/**
 * Every server. A 2 MB young generation instead of V8's 64 MB on a large machine (under 50
 * connections it filled and held 128 MB of new space), and V8's memory-saving heap growth, so
 * garbage promoted to the old generation is collected before it doubles the heap.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--optimize-for-size']

/**
 * `start` on the embedded PGlite database, in addition. V8's optimising WebAssembly compiler held
 * 300 to 500 MB compiling PGlite's 9 MB module (peaks above 700 MB); its baseline compiler alone
 * keeps a PGlite process at about 150 MB.
 */
export const EMBEDDED_NODE_FLAGS: readonly string[] = ['--liftoff-only', ...SERVER_NODE_FLAGS]

/** The flags of `wanted` this process was not started with (its command line and NODE_OPTIONS). */
export function missingNodeFlags(wanted: readonly string[], execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)])
  return wanted.filter((flag) => !given.has(flag))
}
