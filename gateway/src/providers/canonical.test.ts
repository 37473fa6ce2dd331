import { describe, expect, it } from 'vitest'
import { costOf, tablePrice } from '../pricing/index.ts'
import { usageFromOpenAI } from './canonical.ts'

describe('usageFromOpenAI', () => {
  it('reads the audio tokens of a chat completion with audio, and they bill at the audio rates', () => {
    // Break tried: not reading `audio_tokens` (the usage and the cost both fail here).
    const usage = usageFromOpenAI({
      prompt_tokens: 120, completion_tokens: 300, total_tokens: 420,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 250 },
    })
    expect(usage).toEqual({ inputTokens: 120, outputTokens: 300, cachedInputTokens: 0, reasoningTokens: 0, audioInputTokens: 100, audioOutputTokens: 250 })
    // gpt-4o-audio-preview, USD per 1M: text 2.5 in / 10 out, audio 40 in / 80 out.
    expect(costOf(usage, tablePrice('openai', 'gpt-4o-audio-preview-2025-06-03')!)).toBeCloseTo((20 * 2.5 + 100 * 40 + 50 * 10 + 250 * 80) / 1e6, 15)
  })

  it('leaves text-only usage without audio fields', () => {
    expect(usageFromOpenAI({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { audio_tokens: 0 } })).toEqual({ inputTokens: 5, outputTokens: 2 })
  })
})
