import { describe, expect, it } from 'vitest'
import { openAIUsageBatch, openAIUsageChunks } from './usage-chunk.ts'

const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }
const finishing = { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage }

describe('openAIUsageChunks', () => {
  it('splits a finishing chunk that carries usage into the finish and a choices-free usage chunk', () => {
    expect(openAIUsageChunks(finishing, true)).toEqual([
      { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null },
      { id: 'c', object: 'chat.completion.chunk', choices: [], usage },
    ])
  })

  it('passes chunks without usage through untouched', () => {
    const plain = { choices: [{ index: 0 }] }
    expect(openAIUsageChunks(plain, true)[0]).toBe(plain)
    expect(openAIUsageChunks({ choices: [{ index: 0 }], usage: null }, false)).toEqual([{ choices: [{ index: 0 }], usage: null }])
  })

  it('keeps a chunk already in the OpenAI form', () => {
    expect(openAIUsageChunks({ choices: [], usage }, true)).toEqual([{ choices: [], usage }])
  })

  it('drops usage, and a usage-only chunk, when usage was not asked for', () => {
    expect(openAIUsageChunks(finishing, false)).toEqual([{ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }])
    expect(openAIUsageChunks({ choices: [], usage }, false)).toEqual([])
    expect(openAIUsageChunks({ choices: [{ index: 0 }] }, false)).toEqual([{ choices: [{ index: 0 }] }])
  })
})

describe('openAIUsageBatch', () => {
  it('returns the same batch when no chunk carries usage, and rewrites only the one that does', () => {
    const batch = [{ choices: [{ index: 0 }] }, { choices: [{ index: 0 }] }]
    expect(openAIUsageBatch(batch, true)).toBe(batch)
    const first = { choices: [{ index: 0 }] }
    const rewritten = openAIUsageBatch<object>([first, finishing], true)
    expect(rewritten).toHaveLength(3)
    expect(rewritten[0]).toBe(first)
    expect(rewritten[2]).toEqual({ id: 'c', object: 'chat.completion.chunk', choices: [], usage })
    expect(openAIUsageBatch<object>([first, finishing], false)).toEqual([first, { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }])
  })
})
