/**
 * The contract every Limiter backend passes (in process and Redis): exact sliding windows for
 * requests and tokens, all-or-nothing reservations, shadow counters, budgets that reserve, settle
 * and expire. `advance` moves the backend's clock (a fake one in process, real sleep on Redis).
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Counter, Limiter } from './limiter.ts'

export interface LimiterFixture {
  limiter: Limiter
  advance(ms: number): Promise<void>
}

export function limiterContract(name: string, make: () => Promise<LimiterFixture>): void {
  const key = (label: string) => `t${randomUUID().slice(0, 8)}{org}:${label}`
  const rate = (k: string, limit: number, windowMs: number, amount = 1, enforce = true): Counter => ({ kind: 'rate', key: k, limit, windowMs, amount, enforce })
  const budget = (k: string, limit: number, amount: number, enforce = true): Counter => ({ kind: 'budget', key: k, limit, amount, enforce })
  const id = () => randomUUID()

  describe(`${name} limiter contract`, () => {
    it('admits exactly N requests in a window and says when the oldest ages out', async () => {
      const { limiter, advance } = await make()
      const k = key('rpm')
      const first = await limiter.reserve(id(), [rate(k, 3, 1_000)], 1_000)
      expect(first.states[0]).toMatchObject({ ok: true, used: 1, remaining: 2, resetMs: 1_000 })
      const admitted: boolean[] = [first.admitted]
      for (let i = 1; i < 5; i++) admitted.push((await limiter.reserve(id(), [rate(k, 3, 1_000)], 1_000)).admitted)
      expect(admitted).toEqual([true, true, true, false, false])
      const refused = await limiter.reserve(id(), [rate(k, 3, 1_000)], 1_000)
      expect(refused.states[0]).toMatchObject({ ok: false, used: 3, remaining: 0, limit: 3 })
      expect(refused.states[0]!.retryAfterMs).toBeGreaterThan(800)
      expect(refused.states[0]!.retryAfterMs).toBeLessThanOrEqual(1_000)
      await advance(1_050)
      expect((await limiter.reserve(id(), [rate(k, 3, 1_000)], 1_000)).admitted).toBe(true)
    })

    it('slides: entries leave the window one by one, never a boundary burst', async () => {
      const { limiter, advance } = await make()
      const k = key('slide')
      const take = async () => (await limiter.reserve(id(), [rate(k, 4, 600)], 600)).admitted
      expect([await take(), await take()]).toEqual([true, true])
      await advance(300)
      expect([await take(), await take(), await take()]).toEqual([true, true, false])
      await advance(350)
      // The first two aged out; the two from 300 ms ago still count.
      expect([await take(), await take(), await take()]).toEqual([true, true, false])
    })

    it('weighs token entries and settles them to what was used', async () => {
      const { limiter } = await make()
      const k = key('tpm')
      const first = id()
      expect((await limiter.reserve(first, [rate(k, 100, 60_000, 60)], 1_000)).admitted).toBe(true)
      const refused = await limiter.reserve(id(), [rate(k, 100, 60_000, 50)], 1_000)
      expect(refused).toMatchObject({ admitted: false, states: [{ used: 60, remaining: 40 }] })
      await limiter.settle(first, [{ kind: 'rate', key: k, actual: 30 }])
      expect((await limiter.reserve(id(), [rate(k, 100, 60_000, 50)], 1_000)).states[0]).toMatchObject({ ok: true, used: 80 })
    })

    it('records nothing when one enforced counter refuses; shadow counters report without refusing', async () => {
      const { limiter } = await make()
      const [a, b, s] = [key('a'), key('b'), key('shadow')]
      expect((await limiter.reserve(id(), [rate(b, 1, 60_000)], 1_000)).admitted).toBe(true)
      expect((await limiter.reserve(id(), [rate(a, 5, 60_000), rate(b, 1, 60_000)], 1_000)).admitted).toBe(false)
      expect((await limiter.reserve(id(), [rate(a, 5, 60_000)], 1_000)).states[0]!.used).toBe(1)
      expect((await limiter.reserve(id(), [rate(s, 1, 60_000, 1, false)], 1_000)).admitted).toBe(true)
      const over = await limiter.reserve(id(), [rate(s, 1, 60_000, 1, false)], 1_000)
      expect(over.admitted).toBe(true)
      expect(over.states[0]).toMatchObject({ ok: false, used: 2 })
    })

    it('reserves budgets, settles to actual, extends a reservation, and reports usage', async () => {
      const { limiter } = await make()
      const k = key('budget')
      const [r1, r2] = [id(), id()]
      expect((await limiter.reserve(r1, [budget(k, 100, 40)], 60_000)).admitted).toBe(true)
      expect((await limiter.reserve(r2, [budget(k, 100, 40)], 60_000)).admitted).toBe(true)
      expect((await limiter.reserve(id(), [budget(k, 100, 40)], 60_000)).admitted).toBe(false)
      await limiter.settle(r1, [{ kind: 'budget', key: k, actual: 10 }])
      expect(await limiter.usage([k, key('never')])).toEqual([50, 0])
      expect((await limiter.reserve(r2, [budget(k, 100, 45)], 60_000)).admitted).toBe(true)
      expect((await limiter.reserve(r2, [budget(k, 100, 10)], 60_000)).admitted).toBe(false)
      await limiter.settle(r2, [{ kind: 'budget', key: k, actual: 90 }])
      expect(await limiter.usage([k])).toEqual([100])
      expect((await limiter.reserve(id(), [budget(k, 100, 1)], 60_000)).states[0]).toMatchObject({ ok: false, remaining: 0 })
    })

    it('lets a dead holder\'s reservation expire', async () => {
      const { limiter, advance } = await make()
      const k = key('expiry')
      expect((await limiter.reserve(id(), [budget(k, 10, 10)], 200)).admitted).toBe(true)
      expect((await limiter.reserve(id(), [budget(k, 10, 1)], 200)).admitted).toBe(false)
      await advance(260)
      expect(await limiter.usage([k])).toEqual([0])
      expect((await limiter.reserve(id(), [budget(k, 10, 10)], 200)).admitted).toBe(true)
    })

    it('keeps each request all or nothing when many arrive together, and settles each on its own', async () => {
      // Issued in one tick: the Redis limiter sends them as one script call (tick-batch.ts).
      const { limiter } = await make()
      const full = key('full')
      const open = key('open')
      const tokens = key('tokens')
      await limiter.reserve(id(), [rate(full, 1, 60_000)], 60_000)
      const [refused, admitted, other] = [id(), id(), id()]
      const results = await Promise.all([
        limiter.reserve(refused, [rate(open, 10, 60_000), rate(full, 1, 60_000)], 60_000),
        limiter.reserve(admitted, [rate(open, 10, 60_000), rate(tokens, 1_000, 60_000, 300)], 60_000),
        limiter.reserve(other, [rate(tokens, 1_000, 60_000, 300)], 60_000),
      ])
      expect(results.map((r) => r.admitted)).toEqual([false, true, true])
      // The refused request recorded nothing on its other counter: `open` holds the admitted one only.
      expect(results[1]!.states[0]).toMatchObject({ used: 1 })
      expect(results[2]!.states[0]).toMatchObject({ used: 600 })
      await Promise.all([
        limiter.settle(admitted, [{ kind: 'rate', key: open, actual: 1 }, { kind: 'rate', key: tokens, actual: 100 }]),
        limiter.settle(other, [{ kind: 'rate', key: tokens, actual: 50 }]),
      ])
      expect((await limiter.reserve(id(), [rate(tokens, 1_000, 60_000, 850)], 60_000)).states[0]).toMatchObject({ ok: true, used: 1_000 })
    })

    it('admits exactly what fits when 100 reserve at once', async () => {
      const { limiter } = await make()
      const k = key('race')
      const results = await Promise.all(Array.from({ length: 100 }, () => limiter.reserve(id(), [budget(k, 37 * 7, 7)], 60_000)))
      expect(results.filter((r) => r.admitted)).toHaveLength(37)
      expect(await limiter.usage([k])).toEqual([37 * 7])
    })
  })
}
