import { describe, expect, it } from 'vitest'
import { openAIUsageChunks } from './usage-chunk.ts'

const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }
const finishing = { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage }

describe('openAIUsageChunks', () => {
  it('splits a finishing chunk that carries usage into the finish and a choices-free usage chunk', () => {
    expect(openAIUsageChunks(finishing, true)).toEqual([
      { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null },
      { id: 'c', object: 'chat.completion.chunk', choices: [], usage },
    ])
  })

  it('marks other chunks usage: null when usage was asked for', () => {
    expect(openAIUsageChunks({ choices: [{ index: 0 }] }, true)).toEqual([{ choices: [{ index: 0 }], usage: null }])
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
