import { describe, expect, it } from 'vitest'
import { RecordBatch } from './record-batch.ts'

/** Records of about 1 KiB, some with text outside ASCII (bytes differ from characters). */
const records = Array.from({ length: 300 }, (_, index) => JSON.stringify({ id: `rec-${index}`, note: index % 7 === 0 ? 'é€🙂'.repeat(100) : 'x'.repeat(1000) }))

describe('RecordBatch', () => {
  it('gives back each record as it was added, and the records joined by commas as bytes', () => {
    const batch = RecordBatch.of(records)
    expect(batch.count).toBe(300)
    expect(batch.lines()).toEqual(records)
    const { parts, bytes } = batch.parts()
    const joined = Buffer.concat(parts)
    expect(joined.toString('utf8')).toBe(records.join(','))
    expect(bytes).toBe(joined.length)
    // No record spans two chunks: every chunk starts with a record (or the comma before one).
    expect(parts.length).toBeGreaterThan(4)
    expect(parts.slice(1).every((part) => part.toString('utf8', 0, 8) === ',{"id":"')).toBe(true)
  })

  it('writes a record outside ASCII, and one larger than a chunk', () => {
    const batch = new RecordBatch()
    batch.add('{"id":"a","requestBody":{"text":"é"}}')
    const big = JSON.stringify({ id: 'big', text: 'y'.repeat(200_000) })
    batch.add(big)
    batch.add('{"id":"c"}')
    expect(batch.lines()).toEqual(['{"id":"a","requestBody":{"text":"é"}}', big, '{"id":"c"}'])
    expect(JSON.parse(`[${Buffer.concat(batch.parts().parts).toString('utf8')}]`)).toHaveLength(3)
  })

  it('reuses a delivered batch\'s chunks for the next batch without mixing their records', () => {
    const first = RecordBatch.of(records.slice(0, 100))
    first.release()
    expect(first.count).toBe(0)
    const second = RecordBatch.of(records.slice(100, 200))
    expect(second.lines()).toEqual(records.slice(100, 200))
    expect(Buffer.concat(second.parts().parts).toString('utf8')).toBe(records.slice(100, 200).join(','))
  })

  it('holds more records than its span array first has room for', () => {
    const many = Array.from({ length: 1200 }, (_, index) => `{"id":"r${index}"}`)
    const batch = RecordBatch.of(many)
    expect(batch.count).toBe(1200)
    expect(batch.lines()).toEqual(many)
    expect(Buffer.concat(batch.parts().parts).toString('utf8')).toBe(many.join(','))
  })
})
