import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { heldTickObjectForTests, holdTickObjectShape } from './tick-shape.ts'

const MODULE = fileURLToPath(new URL('./tick-shape.ts', import.meta.url))

/**
 * Ten rounds of: 2,000 tick objects, none left alive, `nextTick`'s optimised code thrown away, full
 * collections. Then the state of each inline cache of the tick literal's keys, from V8's own print.
 * (Semicolons: a line starting with `%` would otherwise continue the one before as a remainder.)
 */
const SCRIPT = `
import { holdTickObjectShape } from ${JSON.stringify(MODULE)}
if (process.argv[1] === 'hold') holdTickObjectShape()
let ticks = 0
for (let round = 0; round < 10; round++) {
  for (let i = 0; i < 2000; i++) process.nextTick(() => { ticks++ })
  await new Promise((resolve) => setImmediate(resolve));
  %DeoptimizeFunction(process.nextTick);
  for (let i = 0; i < 3; i++) gc({ type: 'major' });
}
%DebugPrint(process.nextTick);
`

function literalKeyCaches(mode: 'hold' | 'none'): string[] {
  const printed = execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', SCRIPT, mode], { encoding: 'utf8' })
  return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!)
}

describe('holdTickObjectShape', () => {
  it('holds a tick object (the symbol keys and callback of what nextTick queues), refreshed on its timer', async () => {
    holdTickObjectShape(100)
    await new Promise((resolve) => setImmediate(resolve))
    const held = heldTickObjectForTests()
    expect(held).not.toBeNull()
    expect(Object.keys(held!)).toContain('callback')
    expect(Object.getOwnPropertySymbols(held!).map((symbol) => symbol.description)).toContain('async_id_symbol')
    // A second call starts nothing new; the refresh takes a later tick object.
    holdTickObjectShape(5)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const refreshed = heldTickObjectForTests()
    expect(refreshed).not.toBe(held)
    expect(Object.keys(refreshed!)).toContain('callback')
  })

  it("keeps nextTick's literal caches monomorphic through deoptimisations and full collections, which without it turn megamorphic", () => {
    const without = literalKeyCaches('none')
    const held = literalKeyCaches('hold')
    // Five keys (three symbols, callback, args); if Node changes the literal, this says so first.
    expect(without).toHaveLength(5)
    expect(without).toContain('MEGAMORPHIC')
    expect(held).toEqual(['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC'])
  })
})
