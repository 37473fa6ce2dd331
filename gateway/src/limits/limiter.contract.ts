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

    it('extends and settles one reservation twice in one batch, and settles before it reserves', async () => {
      const { limiter } = await make()
      const [tokens, spend] = [key('tokens'), key('spend')]
      const [r1, r2] = [id(), id()]
      const extended = await Promise.all([
        limiter.reserve(r1, [rate(tokens, 100, 60_000, 60), budget(spend, 100, 40)], 60_000),
        limiter.reserve(r1, [rate(tokens, 100, 60_000, 10), budget(spend, 100, 10)], 60_000),
      ])
      expect(extended.map((r) => r.states.map((s) => s.used))).toEqual([[60, 40], [70, 50]])
      // Settled in the same batch as a reservation that only fits once the settlement is counted.
      const [, fits] = await Promise.all([
        limiter.settle(r1, [{ kind: 'rate', key: tokens, actual: 30 }, { kind: 'budget', key: spend, actual: 5 }]),
        limiter.reserve(r2, [budget(spend, 100, 60)], 60_000),
      ])
      expect(fits).toMatchObject({ admitted: true, states: [{ used: 65 }] })
      // A second settlement re-weighs the rate entry and charges the budget again (its reservation is gone).
      await Promise.all([
        limiter.settle(r1, [{ kind: 'rate', key: tokens, actual: 20 }, { kind: 'budget', key: spend, actual: 7 }]),
        limiter.settle(r2, [{ kind: 'budget', key: spend, actual: 20 }]),
      ])
      expect(await limiter.usage([spend])).toEqual([32])
      expect((await limiter.reserve(id(), [rate(tokens, 100, 60_000, 80)], 60_000)).states[0]).toMatchObject({ ok: true, used: 100 })
    })

    it('checks each request against its own limit when a counter\'s limit changes between requests of one batch', async () => {
      // A snapshot raising a limit lands between two requests of the same turn.
      const { limiter } = await make()
      const [k, b] = [key('changed'), key('changed-budget')]
      await limiter.reserve(id(), [rate(k, 2, 60_000), budget(b, 10, 10)], 60_000)
      await limiter.reserve(id(), [rate(k, 2, 60_000)], 60_000)
      const results = await Promise.all([
        limiter.reserve(id(), [rate(k, 2, 60_000), budget(b, 10, 1)], 60_000),
        limiter.reserve(id(), [rate(k, 5, 60_000), budget(b, 20, 5)], 60_000),
        limiter.reserve(id(), [rate(k, 2, 60_000, 1, false)], 60_000),
      ])
      expect(results.map((r) => r.admitted)).toEqual([false, true, true])
      expect(results[1]!.states).toMatchObject([{ used: 3, limit: 5 }, { used: 15, limit: 20 }])
      expect(results[2]!.states[0]).toMatchObject({ ok: false, used: 4, limit: 2 })
    })

    it('walks a long log to say when enough of it ages out', async () => {
      const { limiter, advance } = await make()
      const k = key('long')
      const fill = (count: number) => Promise.all(Array.from({ length: count }, () => limiter.reserve(id(), [rate(k, 250, 1_000)], 60_000)))
      await fill(150)
      await advance(200)
      await fill(100)
      // 120 must age out: the 120th oldest entry is in the first group; 200 reach into the second.
      const soon = await limiter.reserve(id(), [rate(k, 250, 1_000, 120)], 60_000)
      const later = await limiter.reserve(id(), [rate(k, 250, 1_000, 200)], 60_000)
      expect(soon.states[0]!.retryAfterMs).toBeLessThanOrEqual(800)
      expect(later.states[0]!.retryAfterMs).toBeGreaterThan(850)
      expect(later.states[0]!.retryAfterMs).toBeLessThanOrEqual(1_000)
    })

    it('drops a log and reservations that aged out whole after a quiet spell, however many', async () => {
      // More entries than Lua can unpack into one command (8,000).
      const { limiter, advance } = await make()
      const [log, spend] = [key('quiet-log'), key('quiet-budget')]
      for (let done = 0; done < 8_200; done += 1_000) {
        await Promise.all(Array.from({ length: 1_000 }, () => limiter.reserve(id(), [rate(log, 1_000_000, 4_000), budget(spend, 1_000_000, 1)], 4_000)))
      }
      await advance(4_100)
      expect((await limiter.reserve(id(), [rate(log, 1_000_000, 4_000)], 4_000)).states[0]).toMatchObject({ ok: true, used: 1 })
      expect(await limiter.usage([spend])).toEqual([0])
    }, 30_000)

    it('admits exactly what fits when 100 reserve at once', async () => {
      const { limiter } = await make()
      const k = key('race')
      const results = await Promise.all(Array.from({ length: 100 }, () => limiter.reserve(id(), [budget(k, 37 * 7, 7)], 60_000)))
      expect(results.filter((r) => r.admitted)).toHaveLength(37)
      expect(await limiter.usage([k])).toEqual([37 * 7])
    })
  })
}
