import { describe, expect, it } from 'vitest'
import { MemoryResponseCache } from './memory.ts'
import type { CachedAnswer } from './response-cache.ts'
import { SemanticCache } from './semantic-cache.ts'
import { FLAT_PARTITION_LIMIT, SemanticIndex } from './semantic-index.ts'
import { semanticQuery } from './semantic-query.ts'

/** A unit vector along `axis`, tilted towards `towards` by `tilt` (cosine to the axis is 1/sqrt(1+tilt²)). */
function vector(axis: number, towards = 0, tilt = 0, dimensions = 32): Float32Array {
  const out = new Float32Array(dimensions)
  out[axis] = 1
  out[towards] = out[towards]! + tilt
  return out
}

const answer = (body: string): CachedAnswer => ({ kind: 'json', status: 200, body, usage: null })

describe('SemanticIndex', () => {
  it('finds the nearest entry at or above the threshold, in its own workspace and partition only', () => {
    const index = new SemanticIndex()
    const later = Date.now() + 60_000
    index.add('ws-a', 'p', 'k-x', vector(0), later)
    index.add('ws-a', 'p', 'k-y', vector(1), later)
    expect(index.search('ws-a', 'p', vector(0, 2, 0.1), 0.95)).toMatchObject({ key: 'k-x' })
    expect(index.search('ws-a', 'p', vector(0, 2, 0.1), 0.95)!.similarity).toBeCloseTo(1 / Math.sqrt(1.01), 2)
    // cos = 1/sqrt(2) ≈ 0.71: below the threshold.
    expect(index.search('ws-a', 'p', vector(0, 2, 1), 0.95)).toBeNull()
    expect(index.search('ws-b', 'p', vector(0), 0.5)).toBeNull()
    expect(index.search('ws-a', 'q', vector(0), 0.5)).toBeNull()
    expect(index.search('ws-a', 'p', vector(0, 0, 0, 16), 0.5)).toBeNull()
  })

  it('drops expired entries, removed entries and, over the cap, those nearest expiry', () => {
    let now = 1_000
    const index = new SemanticIndex({ maxEntriesPerWorkspace: 2 }, () => now)
    index.add('ws', 'p', 'soon', vector(0), 2_000)
    index.add('ws', 'p', 'late', vector(1), 9_000)
    index.add('ws', 'p', 'later', vector(2), 10_000)
    expect(index.size('ws')).toBe(2)
    expect(index.search('ws', 'p', vector(0), 0.9)).toBeNull()
    index.remove('ws', 'p', 'late')
    expect(index.search('ws', 'p', vector(1), 0.9)).toBeNull()
    now = 10_000
    expect(index.search('ws', 'p', vector(2), 0.9)).toBeNull()
    index.sweep()
    expect(index.size('ws')).toBe(0)
    expect(index.hasWorkspace('ws')).toBe(true)
  })
  it('searches a small partition exactly and a large one through its graph, with the same answers', () => {
    const index = new SemanticIndex()
    const later = Date.now() + 60_000
    const dimensions = 64
    const axis = (i: number): Float32Array => {
      const out = new Float32Array(dimensions)
      out[i % dimensions] = 1
      out[(i * 7 + 3) % dimensions] = out[(i * 7 + 3) % dimensions]! + 0.5 + (i % 13) / 10
      return out
    }
    const check = (count: number) => {
      for (const i of [0, 5, count - 1]) expect(index.search('ws', 'p', axis(i), 0.999)?.key).toBe(`k${i}`)
    }
    for (let i = 0; i < FLAT_PARTITION_LIMIT; i++) index.add('ws', 'p', `k${i}`, axis(i), later)
    check(FLAT_PARTITION_LIMIT)
    index.remove('ws', 'p', 'k5')
    expect(index.search('ws', 'p', axis(5), 0.999)?.key).not.toBe('k5')
    index.add('ws', 'p', 'k5', axis(5), later)
    for (let i = FLAT_PARTITION_LIMIT; i < FLAT_PARTITION_LIMIT + 50; i++) index.add('ws', 'p', `k${i}`, axis(i), later)
    check(FLAT_PARTITION_LIMIT + 50)
    index.remove('ws', 'p', 'k5')
    expect(index.search('ws', 'p', axis(5), 0.999)?.key).not.toBe('k5')
    expect(index.size('ws')).toBe(FLAT_PARTITION_LIMIT + 49)
  })
})

describe('SemanticCache in process', () => {
  it('answers a similar turn from the stored entry and forgets entries the response cache lost', async () => {
    const entries = new MemoryResponseCache()
    const cache = new SemanticCache(entries, new SemanticIndex())
    try {
      await cache.store('ws', 's.k1', 'p', vector(3), answer('{"a":1}'), 60_000)
      const hit = await cache.lookup('ws', 'p', vector(3, 4, 0.05), 0.95)
      expect(hit?.answer.body).toBe('{"a":1}')
      expect(hit?.answer.semantic?.partition).toBe('p')
      expect(await cache.lookup('ws', 'p', vector(4), 0.95)).toBeNull()
      await entries.close()
      expect(await cache.lookup('ws', 'p', vector(3), 0.95)).toBeNull()
    } finally {
      await cache.close()
    }
  })
})

describe('semanticQuery', () => {
  const chat = (extra: Record<string, unknown> = {}, last: unknown = { role: 'user', content: 'hello there' }) => ({ model: 'm', messages: [{ role: 'system', content: 's' }, last], ...extra })

  it('takes the last user turn and keeps the rest as the filter', () => {
    expect(semanticQuery('chat', chat())).toEqual({ text: 'hello there', filter: { model: 'm', messages: [{ role: 'system', content: 's' }] } })
    expect(semanticQuery('messages', chat({}, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }))?.text).toBe('a\nb')
  })

  it('refuses what semantic mode cannot answer safely', () => {
    expect(semanticQuery('completions', chat())).toBeNull()
    expect(semanticQuery('chat', chat({ tools: [] }))).toBeNull()
    expect(semanticQuery('chat', chat({ n: 2 }))).toBeNull()
    expect(semanticQuery('chat', chat({}, { role: 'assistant', content: 'x' }))).toBeNull()
    expect(semanticQuery('chat', chat({}, { role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }))).toBeNull()
    expect(semanticQuery('chat', chat({}, { role: 'user', content: 'x', name: 'bob' }))).toBeNull()
    expect(semanticQuery('chat', chat({}, { role: 'user', content: '  ' }))).toBeNull()
  })
})
