import { describe, expect, it } from 'vitest'
import { readCallgrindDump, readDumpTotals, runtimeLiteralKeyInstructions } from './callgrind-dump.ts'

// A dump as callgrind writes it: compressed names, a call whose inclusive cost is not the caller's.
const DUMP = `# callgrind format
version: 1
events: Ir
summary: 1000

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) Builtins_JsonStringify
10 300
+2 100
cfn=(2) void v8::internal::MarkingVisitorBase<v8::internal::ConcurrentMarkingVisitor>::ProcessStrongHeapObject<x>(y)
calls=1 0
12 400
fn=(2)
20 350
fn=(3) 0x0000000028154a40
5 150
fn=(4) heap::base::ActiveSystemPages::Add(unsigned long)
1 50
fn=(5) v8::internal::Scavenger::ScavengeObject<z>(w)
1 50
fn=(6) v8::internal::compiler::GraphReducer::ReduceTop()
3 70
fn=(7) v8::internal::maglev::MaglevGraphBuilder::Build()
3 30
`

describe('readCallgrindDump', () => {
  it('sums self instructions per function, leaves call lines out, and splits off the collector and the optimising compilers', () => {
    const cost = readCallgrindDump(DUMP)
    expect(cost.totalInstructions).toBe(300 + 100 + 350 + 150 + 50 + 50 + 70 + 30)
    expect(cost.gcInstructions).toBe(350 + 50 + 50)
    expect(cost.compilerInstructions).toBe(70 + 30)
    expect(cost.byFunction.get('Builtins_JsonStringify')).toBe(400)
    expect(cost.byFunction.get('0x0000000028154a40')).toBe(150)
  })
})

describe('readDumpTotals', () => {
  it('names each count of the totals line by its event', () => {
    const dump = 'version: 1\nevents: Ir I1mr Bcm\nsummary: 9 8 7\n\nfn=(1) x\n1 1 1 1\ntotals: 100 20 3\n'
    expect(readDumpTotals(dump)).toEqual({ Ir: 100, I1mr: 20, Bcm: 3 })
  })

  it('falls back to the summary line, and refuses a dump with neither', () => {
    expect(readDumpTotals(DUMP)).toEqual({ Ir: 1000 })
    expect(() => readDumpTotals('version: 1\n')).toThrow(/no events/)
  })
})

describe('runtimeLiteralKeyInstructions', () => {
  it('sums the self instructions of V8\'s runtime for object-literal keys, and nothing else', () => {
    const dump = `${DUMP}fn=(8) v8::internal::Runtime_DefineKeyedOwnPropertyInLiteral(int, unsigned long*, v8::internal::Isolate*)
4 900
fn=(9) v8::internal::Runtime_DefineKeyedOwnPropertyInLiteralX()
4 5
`
    expect(runtimeLiteralKeyInstructions(readCallgrindDump(dump))).toBe(900)
    expect(runtimeLiteralKeyInstructions(readCallgrindDump(DUMP))).toBe(0)
  })
})
