import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { stepBatches } from './batches.ts'

/** A source that records whether it was closed early. */
function source(batches: number[][], failAfter?: number): AsyncIterable<number[]> & { closed: boolean } {
  const made = {
    closed: false,
    [Symbol.asyncIterator]: () => {
      let index = 0
      return {
        next: async (): Promise<IteratorResult<number[]>> => {
          if (failAfter !== undefined && index === failAfter) throw new Error('cut')
          return index < batches.length ? { done: false, value: batches[index++]! } : { done: true, value: undefined }
        },
        return: async (): Promise<IteratorResult<number[]>> => {
          made.closed = true
          return { done: true, value: undefined }
        },
      }
    },
  }
  return made
}

async function read<T>(batches: AsyncIterable<readonly T[]>, stopAfter = Infinity): Promise<T[][]> {
  const out: T[][] = []
  for await (const batch of batches) {
    out.push([...batch])
    if (out.length >= stopAfter) break
  }
  return out
}

describe('stepBatches', () => {
  it('maps each batch, drops empty ones, adds the flush and ends once as completed', async () => {
    const ends: unknown[] = []
    const stepped = stepBatches(source([[1, 2], [3], [4]]), {
      map: (batch) => batch.filter((n) => n !== 3).map((n) => n * 10),
      flush: () => [99],
      end: (outcome) => ends.push(outcome),
    })
    expect(await read(stepped)).toEqual([[10, 20], [40], [99]])
    expect(ends).toEqual([{ completed: true, error: null }])
  })

  it('ends with the failure when the source or a step fails, and closes the source a step failed', async () => {
    const failing = source([[1], [2]], 1)
    const ends: Array<{ completed: boolean; error: unknown }> = []
    await expect(read(stepBatches(failing, { end: (outcome) => ends.push(outcome) }))).rejects.toThrow('cut')
    expect(ends).toHaveLength(1)
    expect(ends[0]!.completed).toBe(false)
    expect((ends[0]!.error as Error).message).toBe('cut')

    const healthy = source([[1], [2]])
    const stepEnds: Array<{ completed: boolean; error: unknown }> = []
    const refusing = stepBatches(healthy, {
      map: (batch) => {
        if (batch[0] === 2) throw new Error('denied')
        return batch
      },
      end: (outcome) => stepEnds.push(outcome),
    })
    await expect(read(refusing)).rejects.toThrow('denied')
    expect(healthy.closed).toBe(true)
    expect((stepEnds[0]!.error as Error).message).toBe('denied')
  })

  it('ends as not completed, without an error, when its reader stops early; no flush then', async () => {
    const upstream = source([[1], [2], [3]])
    const ends: unknown[] = []
    let flushed = false
    const stepped = stepBatches(upstream, {
      flush: () => {
        flushed = true
        return []
      },
      end: (outcome) => ends.push(outcome),
    })
    expect(await read(stepped, 1)).toEqual([[1]])
    expect(ends).toEqual([{ completed: false, error: null }])
    expect(upstream.closed).toBe(true)
    expect(flushed).toBe(false)
  })

  it('completes only when the flushed tail was taken: a reader that leaves after the tail did not finish', async () => {
    const ends: unknown[] = []
    const stepped = stepBatches(source([[1]]), { flush: () => [2], end: (outcome) => ends.push(outcome) })
    expect(await read(stepped, 2)).toEqual([[1], [2]])
    expect(ends).toEqual([{ completed: false, error: null }])
  })
})

describe('the stream path', () => {
  it('has no async generator between the provider and the client (they made each exchange outlive scavenges)', () => {
    const files = ['../upstream/framing/sse-relay.ts', './dispatch.ts', './stage.ts', './batches.ts', '../http/routes/inference.ts', '../http/sse-writer.ts']
    for (const file of files) {
      const text = readFileSync(new URL(file, import.meta.url), 'utf8')
      expect({ file, generators: /async\s+function\s*\*|async\s*\*\s*\w+\s*\(/.test(text) }).toEqual({ file, generators: false })
    }
  })
})

