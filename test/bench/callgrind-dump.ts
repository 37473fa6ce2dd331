/**
 * Reads a callgrind dump (the format valgrind's callgrind writes, `events: Ir`) into instructions
 * per function, self cost only, and splits off two parts of V8 that run in bursts: the garbage
 * collector (a major collection marks the whole heap) and the optimising compilers (TurboFan,
 * Maglev: still a fifth of the instructions after 1,500 warm-up requests under valgrind, and
 * more or less of it from run to run). Over a few thousand requests each moves by tens of percent
 * between runs; the rest, what the request path itself executes, holds still and is the figure to
 * compare changes by.
 */

/** V8's collector: marking, scavenging, sweeping, compaction, and their heap walks. */
const GC_FUNCTION = /v8::internal::(?:\w*Marking\w*|Scaveng\w*|\w*Sweep\w*|MarkCompact\w*|\w*Evacuat\w*|ConcurrentMarking|IncrementalMarking|MinorMS\w*|ArrayBufferSweeper|GCTracer|MemoryAllocator|FreeList\w*|HeapObject::SizeFromMap|Heap::\w+|\(anonymous namespace\)::IterateObjectCache|BodyDescriptorBase|\w*BodyDescriptor\w*::IterateBody<v8::internal::\w*(?:Marking|Scaveng)\w*)|heap::base::|cppgc::/

/** V8's optimising compilers and their code generation. */
const COMPILER_FUNCTION = /v8::internal::(?:compiler::|maglev::|\w*Assembler\w*::|(?:\w+::)*\w*RegisterAllocat)/

export interface DumpCost {
  totalInstructions: number
  gcInstructions: number
  compilerInstructions: number
  /** Self instructions by function name (JIT code has none: valgrind names it by address). */
  byFunction: Map<string, number>
}

/**
 * Name compression: `fn=(12) name` defines id 12, a later `fn=(12)` reuses it. A `calls=` line is
 * followed by one line of the callee's inclusive cost, which is not the caller's own.
 */
export function readCallgrindDump(text: string): DumpCost {
  const names = new Map<string, string>()
  const byFunction = new Map<string, number>()
  let current = '(unknown)'
  let skipNext = false
  let total = 0
  let gc = 0
  let compiler = 0
  let currentIsGc = false
  let currentIsCompiler = false
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) {
      const match = /^fn=\((\d+)\)(?: (.*))?$/.exec(line)
      if (match) {
        if (match[2] !== undefined) names.set(match[1]!, match[2])
        current = names.get(match[1]!) ?? '(unknown)'
      } else {
        current = line.slice(3)
      }
      currentIsGc = GC_FUNCTION.test(current)
      currentIsCompiler = !currentIsGc && COMPILER_FUNCTION.test(current)
      continue
    }
    if (line.startsWith('cfn=')) {
      // Defines a name too, used by a later fn= line.
      const match = /^cfn=\((\d+)\) (.*)$/.exec(line)
      if (match) names.set(match[1]!, match[2]!)
      continue
    }
    if (line.startsWith('calls=')) {
      skipNext = true
      continue
    }
    const first = line.charCodeAt(0)
    const costLine = (first >= 48 && first <= 57) || line.startsWith('+') || line.startsWith('-') || line.startsWith('*')
    if (!costLine) continue
    if (skipNext) {
      skipNext = false
      continue
    }
    const cost = Number(line.split(' ')[1] ?? 0)
    if (!Number.isFinite(cost)) continue
    total += cost
    if (currentIsGc) gc += cost
    if (currentIsCompiler) compiler += cost
    byFunction.set(current, (byFunction.get(current) ?? 0) + cost)
  }
  return { totalInstructions: total, gcInstructions: gc, compilerInstructions: compiler, byFunction }
}

/**
 * The whole dump's count of each event (`events:` names them, `totals:` or `summary:` counts them):
 * with `--cache-sim=yes --branch-sim=yes`, cache misses (I1mr, D1mr, D1mw, ILmr, DLmr, DLmw) and
 * mispredicted branches (Bcm, Bim) besides the instructions (Ir).
 */
export function readDumpTotals(text: string): Record<string, number> {
  const events = /^events: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/)
  const counts = (/^totals: (.+)$/m.exec(text) ?? /^summary: (.+)$/m.exec(text))?.[1]?.trim().split(/\s+/).map(Number)
  if (!events || !counts) throw new Error('the dump has no events or totals line')
  return Object.fromEntries(events.map((event, index) => [event, counts[index] ?? 0]))
}

/**
 * V8's runtime function for a computed key in an object literal. Node's `process.nextTick` builds
 * each tick object with three symbol keys; when the literal's feedback is monomorphic, optimised
 * code stores them inline and this function runs a few hundred instructions a request. When that
 * feedback went megamorphic (2 of 4 gateway runs under valgrind, 8 of 11 bench gateways in `perf`,
 * 2026-12-08), each key went through here: about 40,000 more instructions a request on the
 * request path. Gatehouse now holds a tick object so that it does not (gateway/src/core/tick-shape.ts);
 * a run over the threshold says that hold failed.
 */
const RUNTIME_LITERAL_KEY = /^v8::internal::Runtime_DefineKeyedOwnPropertyInLiteral\b/

/** Self instructions in RUNTIME_LITERAL_KEY: over about 1,000 a request, the run's tick objects took the slow path above. */
export function runtimeLiteralKeyInstructions(cost: DumpCost): number {
  let total = 0
  for (const [name, instructions] of cost.byFunction) if (RUNTIME_LITERAL_KEY.test(name)) total += instructions
  return total
}
