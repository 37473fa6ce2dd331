/**
 * V8 flags (and one Node option) Gatehouse's servers start with (docs/operations.md, "Memory").
 * None can be set from inside a running process: V8 sizes its heap and picks its WebAssembly
 * compilers when it starts, Node maps its code when it starts, and Node refuses the V8 flags in
 * NODE_OPTIONS. So the `node` command line carries them: the Dockerfile's entrypoint, `make run`
 * and the benchmark's gateway; node-flags.test.ts keeps those in step with these lists. Node
 * keeps a compile cache per set of V8 flags, so the Dockerfile warms one with these too.
 */

/**
 * Every server: 8 MB semi-spaces, no allocation-site pretenuring, and Node's code on large pages.
 *  - Under load a scavenge copies what the requests in flight hold (50 connections: the same
 *    amount whatever the semi-space size), so its pauses per request fall as the young generation
 *    grows. Main-thread collection pauses per request (test/bench/gc-promotion.ts, 50 connections,
 *    20,000 requests, three runs each, 2026-11-29): 4 MB 16-19 µs, 8 MB 11-12 µs, 16 MB 7-8 µs.
 *    16 MB held 180-194 MB resident under `make bench`'s load; 8 MB stays well below the 150 MB of
 *    issue #9 (docs/operations.md, "Memory"). V8's own default on a large machine is 64 MB.
 *  - V8 pretenures an allocation site (allocates its objects straight in the old generation) once
 *    enough of them survived a scavenge. Under 50 connections a request's objects often do, so in
 *    5 of 6 fresh gateways V8 pretenured some: those objects then died in the old generation, kept
 *    the young objects they pointed to alive through scavenges, and each process promoted 3.5-3.8
 *    KB a request with 9-10 major collections per 20,000 requests, against 1.2-1.4 KB and 3 in
 *    every process without pretenuring (6 of 6); with three limits 7.7 against 2.4 KB and 19
 *    against 5. It is also why fresh processes of the same code differed by up to 30 % in CPU.
 *  - `--use-largepages=silent` (a Node option, not V8's): Node copies its own code (the C++ runtime,
 *    V8's builtins: about 40 MB) onto 2 MB pages at start. Gatehouse runs far more of that code a
 *    request than the bare proxy does (JSON, crypto, WeakMaps, promises), and under callgrind both
 *    execute about as many instructions a request (560 k) while on this VM Gatehouse took twice the
 *    CPU time, which points at instruction fetches missing caches and the TLB rather than at more
 *    work; callgrind's cache model agrees (18 k against 12 k L1 instruction misses). flags-ab.ts,
 *    two processes an arm, three rounds, 2026-11-29: Gatehouse 361 -> 336 µs a request (lower in 6
 *    of 6 pairs); the bare proxy 192 -> 199 (no change). The price: that code is private memory instead of the shared file pages
 *    (+24 MB idle, +10 to 13 MB under make bench's load: 127-128 -> 138-140 MB). `silent`: a
 *    kernel without transparent huge pages keeps the 4 KB pages, without a warning.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--no-allocation-site-pretenuring', '--use-largepages=silent']

/**
 * Where the image links jemalloc (Debian's libjemalloc2), the allocator it preloads into every
 * server (Dockerfile: `ENV LD_PRELOAD`; the sidecar opts out, operator/src/webhook/inject.ts
 * SIDECAR_ENV). Under `make bench`'s load glibc's malloc kept 17 to 48 MB of freed memory in its
 * two arenas (malloc_info from gdb; malloc_trim(0) then gave 15 to 39 MB back at once): freed
 * blocks between live ones, which glibc returns only from the top of a heap. The same load left
 * the gateway at 141 to 169 MB resident from one process to the next (eight processes,
 * 2026-12-08); with jemalloc (SERVER_ENV's MALLOC_CONF) 128 to 129 MB, peaks 133 and 136 MB.
 * CPU per request (test/bench/flags-ab.ts, three processes an arm, four rounds): 4.9 µs less
 * non-streaming (rounds −8.6 to +0.4), 3.9 µs more streaming (+3.1 to +5.1, about 2 %).
 */
export const SERVER_ALLOCATOR_PATH = '/usr/local/lib/libjemalloc.so.2'

/**
 * Environment of every server in the image (the Dockerfile's `ENV`).
 *  - MALLOC_CONF configures jemalloc (SERVER_ALLOCATOR_PATH): two arenas like glibc's below, and
 *    freed pages given back to the kernel after 500 ms (`dirty_decay_ms`) without the lazy middle
 *    stage (`muzzy`). Under the same load jemalloc's default 10 s peaked at 166 MB, 1 s at 146 to
 *    148 MB; 0 ms (given back at once) peaked as low as 500 ms, for 6.7 µs more CPU a request.
 *    Its background purging thread (`background_thread`) gave back later: a 148 MB peak.
 *  - MALLOC_ARENA_MAX for glibc's malloc, where jemalloc is not preloaded (the sidecar): glibc
 *    gives each thread that allocates while another holds the lock an arena of its own, up to 8 per
 *    core, and keeps what is freed there resident; two arenas cut the gateway's RSS under load by
 *    about 15 MB before jemalloc.
 */
export const SERVER_ENV: Readonly<Record<string, string>> = {
  MALLOC_CONF: 'narenas:2,dirty_decay_ms:500,muzzy_decay_ms:0',
  MALLOC_ARENA_MAX: '2',
}

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
