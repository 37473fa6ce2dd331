import { describe, expect, it } from 'vitest'
import type { PriceOverride } from './price.ts'
import { costOf, imagePrice, priceFor, tableModelFamily, tablePrice } from './price.ts'
import { modelPricingConfig } from './public.ts'
import { PRICING_TABLE_VERSION } from './table.ts'

const override = (fields: Partial<PriceOverride> & Pick<PriceOverride, 'provider' | 'model'>): PriceOverride => ({
  workspaceId: null, input: null, output: null, cachedInput: null, cacheWrite: null, reasoning: null,
  audioInput: null, audioOutput: null, cachedAudioInput: null, imageInput: null, perImage: null, perAudioSecond: null, perCharacter: null, version: 'v1', ...fields,
})

describe('audio tokens', () => {
  it('bill text, audio and cached parts each at their own rate', () => {
    const price = tablePrice('openai', 'gpt-realtime-2025-08-28')!
    // USD per 1M: text 4 / cached 0.4 / out 16; audio 32 / cached 0.4 / out 64.
    expect([price.audioInput, price.audioOutput, price.cachedAudioInput].map((v) => v! * 1e6)).toEqual([32, 64, 0.4])
    const usage = { inputTokens: 1000, outputTokens: 500, cachedInputTokens: 300, audioInputTokens: 600, cachedAudioInputTokens: 200, audioOutputTokens: 400 }
    // text input 1000-300-(600-200) = 300; cached text 100; fresh audio 400; cached audio 200; text out 100; audio out 400.
    const expected = (300 * 4 + 100 * 0.4 + 400 * 32 + 200 * 0.4 + 100 * 16 + 400 * 64) / 1e6
    expect(costOf(usage, price)).toBeCloseTo(expected, 15)
    // Without audio counts the same tokens bill as text: the split is what makes the difference.
    expect(costOf({ inputTokens: 1000, outputTokens: 500, cachedInputTokens: 300 }, price)).toBeCloseTo((700 * 4 + 300 * 0.4 + 500 * 16) / 1e6, 15)
  })

  it('bill audio chat models (no cached audio price) and fall back to text rates where a price has no audio', () => {
    const audio = tablePrice('openai', 'gpt-4o-audio-preview-2024-12-17')!
    expect(costOf({ inputTokens: 100, outputTokens: 80, audioInputTokens: 60, audioOutputTokens: 70 }, audio)).toBeCloseTo((40 * 2.5 + 60 * 40 + 10 * 10 + 70 * 80) / 1e6, 15)
    const text = tablePrice('openai', 'gpt-4o')!
    expect(costOf({ inputTokens: 100, outputTokens: 80, cachedInputTokens: 20, audioInputTokens: 60, cachedAudioInputTokens: 10, audioOutputTokens: 70 }, text))
      .toBeCloseTo((80 * 2.5 + 20 * 1.25 + 80 * 10) / 1e6, 15)
  })

  it('take an override of the audio prices over the table, text prices kept', () => {
    const overrides = [override({ provider: 'openai', model: 'gpt-realtime', audioInput: 0.00002, audioOutput: 0.00005, cachedAudioInput: 0.000001, version: 'v7' })]
    const price = priceFor('openai', null, 'gpt-realtime', null, overrides)!
    expect(price).toMatchObject({ audioInput: 0.00002, audioOutput: 0.00005, cachedAudioInput: 0.000001, version: 'v7', source: 'override' })
    expect(price.input).toBeCloseTo(4e-6, 15)
  })
})

describe('the shipped table', () => {
  it('finds dated, versioned and vendor-prefixed ids by their family', () => {
    expect(tablePrice('openai', 'gpt-4o-mini-2024-07-18')?.input).toBeCloseTo(0.15e-6, 15)
    expect(tablePrice('openai', 'gpt-4o-2024-08-06')?.output).toBeCloseTo(10e-6, 15)
    expect(tablePrice('anthropic', 'claude-3-5-sonnet-20241022')?.cacheWrite).toBeCloseTo(3.75e-6, 15)
    expect(tablePrice('bedrock', 'us.anthropic.claude-3-5-haiku-20241022-v1:0')?.input).toBeCloseTo(0.8e-6, 15)
    expect(tablePrice('bedrock', 'amazon.nova-pro-v1:0')?.output).toBeCloseTo(3.2e-6, 15)
    expect(tablePrice('vertex-ai', 'claude-3-5-sonnet@20240620')?.input).toBeCloseTo(3e-6, 15)
    expect(tablePrice('vertex-ai', 'gemini-2.0-flash-001')?.input).toBeCloseTo(0.1e-6, 15)
    expect(tablePrice('azure-openai', 'gpt-4o')?.version).toBe(PRICING_TABLE_VERSION)
    expect(tablePrice('cohere', 'rerank-v3.5')?.perSearchUnit).toBe(0.002)
  })

  it('prices each Claude generation by its own row, never by an older family its id starts with', () => {
    // USD per 1M: [input, output, cache read, 5-minute cache write].
    const perMillion = (kind: string, model: string): number[] => {
      const price = tablePrice(kind, model)!
      return [price.input, price.output, price.cachedInput, price.cacheWrite].map((usd) => Math.round(usd! * 1e9) / 1000)
    }
    // Its own row: `claude-opus-4` costs $15 / $75, three times as much.
    expect(perMillion('anthropic', 'claude-opus-4-8')).toEqual([5, 25, 0.5, 6.25])
    expect(perMillion('anthropic', 'claude-opus-4')).toEqual([15, 75, 1.5, 18.75])
    expect(perMillion('anthropic', 'claude-opus-5-5')).toEqual([4, 20, 0.2, 5])
    expect(perMillion('anthropic', 'claude-fable-5-2')).toEqual([8, 40, 0.2, 10])
    expect(perMillion('anthropic', 'claude-fable-5-1')).toEqual([10, 50, 0.25, 12.5])
    expect(perMillion('anthropic', 'claude-sonnet-5-5')).toEqual([2, 10, 0.1, 2.5])
    expect(perMillion('anthropic', 'claude-haiku-5-5')).toEqual([0.1, 0.5, 0.01, 0.125])
    // The same rows through Bedrock's and Vertex AI's ids.
    expect(perMillion('bedrock', 'us.anthropic.claude-opus-4-6-v1:0')).toEqual([5, 25, 0.5, 6.25])
    expect(perMillion('vertex-ai', 'claude-sonnet-5@20260630')).toEqual([2, 10, 0.2, 2.5])
    expect(tableModelFamily('anthropic', 'claude-sonnet-4-6-20260217')).toBe('claude-sonnet-4-6')
  })

  it('prices OpenAI\'s dotted generations and keeps their dearer `-pro` variants apart', () => {
    const inputOutput = (model: string): number[] => {
      const price = tablePrice('openai', model)!
      return [price.input, price.output].map((usd) => Math.round(usd * 1e9) / 1000)
    }
    expect(inputOutput('gpt-5.5')).toEqual([5, 30])
    // Its own row: `gpt-5.5` costs a sixth as much.
    expect(inputOutput('gpt-5.5-pro')).toEqual([30, 180])
    expect(inputOutput('gpt-5.4-mini-2026-03-17')).toEqual([0.75, 4.5])
    expect(inputOutput('gpt-6-sol')).toEqual([2, 10])
    expect(tableModelFamily('azure-openai', 'gpt-6.1-sol')).toBe('gpt-6.1-sol')
  })

  it('prices Gemini 3 as served (`-preview` is a channel), its Pro models dearer past 200,000 prompt tokens', () => {
    const perMillion = (model: string): number[] => {
      const price = tablePrice('google', model)!
      return [price.input, price.output, price.cachedInput!].map((usd) => Math.round(usd * 1e9) / 1000)
    }
    expect(perMillion('gemini-3.1-pro-preview')).toEqual([2, 12, 0.2])
    expect(perMillion('gemini-3-pro-preview')).toEqual([2, 12, 0.2])
    expect(perMillion('gemini-3-flash-preview')).toEqual([0.5, 3, 0.05])
    expect(perMillion('gemini-3.1-flash-lite-preview')).toEqual([0.25, 1.5, 0.025])
    expect(tableModelFamily('vertex-ai', 'gemini-3.1-pro-preview')).toBe('gemini-3.1-pro')
    // Past 200,000: $4 in, $18 out, $0.40 a cached token.
    const pro = tablePrice('google', 'gemini-3.1-pro-preview')!
    expect(costOf({ inputTokens: 250_000, outputTokens: 1_000, cachedInputTokens: 50_000 }, pro)).toBeCloseTo((200_000 * 4 + 50_000 * 0.4 + 1_000 * 18) / 1e6, 15)
    expect(costOf({ inputTokens: 150_000, outputTokens: 1_000 }, tablePrice('google', 'gemini-3-flash-preview')!)).toBeCloseTo((150_000 * 0.5 + 1_000 * 3) / 1e6, 15)
  })

  it('cuts release tags (dates, snapshot numbers, versions, channels) and nothing else', () => {
    const family = (kind: string, model: string): string | null => tableModelFamily(kind, model)
    // Ids as providers serve them, each to its model's row.
    const served: Array<[string, string, string]> = [
      ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
      ['openai', 'gpt-3.5-turbo-0125', 'gpt-3.5-turbo'],
      ['openai', 'gpt-4o-realtime-preview-2024-12-17', 'gpt-4o-realtime-preview'],
      ['openai', 'tts-1-hd-1106', 'tts-1-hd'],
      ['anthropic', 'claude-opus-4-1-20250805', 'claude-opus-4-1'],
      ['anthropic', 'claude-3-5-haiku-latest', 'claude-3-5-haiku'],
      ['bedrock', 'us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet'],
      ['bedrock', 'amazon.titan-embed-text-v2:0', 'titan-embed-text-v2'],
      ['bedrock', 'meta.llama3-3-70b-instruct-v1:0', 'llama3-3-70b-instruct'],
      ['vertex-ai', 'claude-sonnet-4-5@20250929', 'claude-sonnet-4-5'],
      ['google', 'gemini-2.5-flash-lite-preview-06-17', 'gemini-2.5-flash-lite'],
      ['google', 'gemini-1.5-pro-002', 'gemini-1.5-pro'],
      ['cohere', 'command-r-plus-08-2024', 'command-r-plus'],
      ['mistral-ai', 'mistral-large-2411', 'mistral-large'],
      ['mistral-ai', 'mistral-ocr-latest', 'mistral-ocr'],
      ['x-ai', 'grok-4-0709', 'grok-4'],
      ['x-ai', 'grok-3-mini-beta', 'grok-3-mini'],
    ]
    for (const [kind, model, row] of served) expect(family(kind, model), `${kind} ${model}`).toBe(row)
    // A version or a size is not a tag: a model the table does not know stays unpriced.
    expect(tablePrice('anthropic', 'claude-opus-4-9')).toBeNull()
    expect(tablePrice('openai', 'gpt-5.5-mini')).toBeNull()
    expect(tablePrice('openai', 'gpt-4-32k')).toBeNull()
  })

  it('bills a long prompt\'s whole request in the dearer band, from the first token past the threshold', () => {
    const haiku = tablePrice('anthropic', 'claude-haiku-5-5')!
    // USD per 1M: input 0.1, cache read 0.01, output 0.5; past 100,000 prompt tokens five times each.
    const atThreshold = { inputTokens: 100_000, outputTokens: 1_000, cachedInputTokens: 40_000 }
    expect(costOf(atThreshold, haiku)).toBeCloseTo((60_000 * 0.1 + 40_000 * 0.01 + 1_000 * 0.5) / 1e6, 15)
    expect(costOf({ ...atThreshold, inputTokens: 100_001 }, haiku)).toBeCloseTo(5 * (60_001 * 0.1 + 40_000 * 0.01 + 1_000 * 0.5) / 1e6, 15)
    // GPT-6 Sol past 272,000: input-side rates twice, output 1.5 times.
    const sol = tablePrice('openai', 'gpt-6-sol')!
    const long = { inputTokens: 300_000, outputTokens: 2_000, cachedInputTokens: 100_000 }
    expect(costOf(long, sol)).toBeCloseTo((2 * (200_000 * 2 + 100_000 * 0.2) + 1.5 * 2_000 * 10) / 1e6, 15)
    // An override's rates are scaled by the table row's band too.
    const overridden = priceFor('openai', null, 'gpt-6-sol', null, [override({ provider: 'openai', model: 'gpt-6-sol', input: 1e-6, version: 'v2' })])!
    expect(costOf({ inputTokens: 300_000, outputTokens: 0 }, overridden)).toBeCloseTo(2 * 300_000 * 1e-6, 12)
    // Rows without a band bill every length alike.
    const gpt4o = tablePrice('openai', 'gpt-4o')!
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0 }, gpt4o)).toBeCloseTo(2.5, 12)
  })

  it('keeps a dearer variant apart from its family and knows nothing of unknown models', () => {
    expect(tablePrice('openai', 'o1-pro-2025-03-19')?.input).toBeCloseTo(150e-6, 15)
    expect(tablePrice('openai', 'o1-2024-12-17')?.input).toBeCloseTo(15e-6, 15)
    expect(tablePrice('openai', 'my-finetune')).toBeNull()
    expect(tablePrice('together-ai', 'anything')).toBeNull()
    expect(tablePrice('ollama', 'llama3')?.input).toBe(0)
  })

  it('names the family a model is priced as (a bounded label for metrics)', () => {
    expect(tableModelFamily('openai', 'gpt-4o-2024-08-06')).toBe('gpt-4o')
    expect(tableModelFamily('openai', 'gpt-4o-mini-2024-07-18')).toBe('gpt-4o-mini')
    expect(tableModelFamily('bedrock', 'us.anthropic.claude-3-5-haiku-20241022-v1:0')).toMatch(/^claude-3-5-haiku/)
    expect(tableModelFamily('openai', 'my-finetune')).toBeNull()
    // Self-hosted kinds are free for every model but have no rows, so no family.
    expect(tableModelFamily('ollama', 'llama3')).toBeNull()
  })
})

describe('priceFor', () => {
  const overrides = [
    override({ provider: 'openai', model: 'gpt-4o', input: 1e-6, version: 'kind' }),
    override({ provider: 'openai', model: 'gpt-4o', workspaceId: 'ws1', input: 2e-6, version: 'kind-ws' }),
    override({ provider: 'prov-1', model: 'gpt-4o', input: 3e-6, version: 'id' }),
    override({ provider: 'prov-1', model: 'gpt-4o', workspaceId: 'ws1', input: 4e-6, version: 'id-ws' }),
    override({ provider: 'openai', model: 'custom-model', input: 5e-6, output: 6e-6, version: 'custom' }),
  ]

  it('takes the most specific override and the table for the fields it leaves null', () => {
    expect(priceFor('openai', 'prov-1', 'gpt-4o', 'ws1', overrides)).toMatchObject({ input: 4e-6, version: 'id-ws', source: 'override' })
    expect(priceFor('openai', 'prov-1', 'gpt-4o', 'ws2', overrides)).toMatchObject({ input: 3e-6, version: 'id' })
    expect(priceFor('openai', 'prov-2', 'gpt-4o', 'ws1', overrides)).toMatchObject({ input: 2e-6, version: 'kind-ws' })
    const kindWide = priceFor('openai', 'prov-2', 'gpt-4o', null, overrides)!
    expect(kindWide).toMatchObject({ input: 1e-6, version: 'kind' })
    expect(kindWide.output).toBeCloseTo(10e-6, 15)
    expect(priceFor('openai', null, 'custom-model', null, overrides)).toMatchObject({ input: 5e-6, output: 6e-6 })
    expect(priceFor('openai', null, 'gpt-4o-mini', null, overrides)?.source).toBe('table')
  })
})

describe('costOf', () => {
  it('bills cached input, cache writes and reasoning at their own rates', () => {
    const price = tablePrice('anthropic', 'claude-3-5-sonnet')!
    // 1000 input of which 600 read from cache and 100 written to it; 500 output.
    const cost = costOf({ inputTokens: 1000, outputTokens: 500, cachedInputTokens: 600, cacheWriteInputTokens: 100 }, price)
    expect(cost).toBeCloseTo((300 * 3 + 600 * 0.3 + 100 * 3.75 + 500 * 15) / 1e6, 12)
  })

  it('bills cached input as input where the price has no cached rate, and units beyond tokens', () => {
    const price = tablePrice('openai', 'gpt-4-turbo')!
    expect(costOf({ inputTokens: 1000, outputTokens: 0, cachedInputTokens: 1000 }, price)).toBeCloseTo(1000 * 10e-6, 12)
    expect(costOf({ inputTokens: 0, outputTokens: 0, searchUnits: 3 }, tablePrice('cohere', 'rerank-v3.5')!)).toBeCloseTo(0.006, 12)
    expect(costOf({ inputTokens: 0, outputTokens: 0, images: 2 }, tablePrice('openai', 'dall-e-3')!)).toBeCloseTo(0.08, 12)
    expect(costOf({ inputTokens: 0, outputTokens: 0, pages: 10 }, tablePrice('mistral-ai', 'mistral-ocr-latest')!)).toBeCloseTo(0.01, 12)
  })

  it('bills transcription by the second or by token, speech by the character or by token', () => {
    // whisper-1: $0.006 a minute.
    expect(costOf({ inputTokens: 0, outputTokens: 0, audioSeconds: 90 }, tablePrice('openai', 'whisper-1')!)).toBeCloseTo(0.009, 12)
    // gpt-4o-transcribe: audio in $6, text in $2.5, text out $10 per 1M.
    const transcribe = tablePrice('openai', 'gpt-4o-transcribe')!
    expect(costOf({ inputTokens: 1010, outputTokens: 200, audioInputTokens: 1000 }, transcribe)).toBeCloseTo((1000 * 6 + 10 * 2.5 + 200 * 10) / 1e6, 15)
    expect(tableModelFamily('openai', 'gpt-4o-mini-transcribe-2025-12-15')).toBe('gpt-4o-mini-transcribe')
    // tts-1: $15 per 1M characters, tts-1-hd $30; gpt-4o-mini-tts: text in $0.6, audio out $12 per 1M tokens.
    expect(costOf({ inputTokens: 0, outputTokens: 0, inputCharacters: 1000 }, tablePrice('openai', 'tts-1')!)).toBeCloseTo(0.015, 12)
    expect(costOf({ inputTokens: 0, outputTokens: 0, inputCharacters: 1000 }, tablePrice('openai', 'tts-1-hd-1106')!)).toBeCloseTo(0.03, 12)
    expect(costOf({ inputTokens: 100, outputTokens: 2000, audioOutputTokens: 2000, inputCharacters: 400 }, tablePrice('openai', 'gpt-4o-mini-tts')!)).toBeCloseTo((100 * 0.6 + 2000 * 12) / 1e6, 15)
  })

  it('overrides the price per character like any other field', () => {
    const price = priceFor('openai', null, 'tts-1', null, [override({ provider: 'openai', model: 'tts-1', perCharacter: 0.00002 })])!
    expect(price).toMatchObject({ perCharacter: 0.00002, source: 'override' })
    expect(costOf({ inputTokens: 0, outputTokens: 0, inputCharacters: 500 }, price)).toBeCloseTo(0.01, 12)
  })

  it('bills DALL·E images by quality and size, a size it does not list at its flat price', () => {
    // OpenAI's list: dall-e-3 standard $0.04 square, $0.08 wide; hd $0.08 and $0.12; dall-e-2 $0.016, $0.018, $0.02 by size.
    const dalle3 = tablePrice('openai', 'dall-e-3')!
    const image = (quality: string, size: string) => ({ quality, size })
    expect(costOf({ inputTokens: 0, outputTokens: 0, images: 3, imageVariant: image('hd', '1792x1024') }, dalle3)).toBeCloseTo(0.36, 12)
    expect(imagePrice(dalle3, image('standard', '1024x1792'))).toBe(0.08)
    expect(imagePrice(dalle3, image('hd', '1024x1024'))).toBe(0.08)
    expect(imagePrice(dalle3, image('standard', '640x480'))).toBe(0.04)
    expect(imagePrice(dalle3, undefined)).toBe(0.04)
    const dalle2 = tablePrice('openai', 'dall-e-2')!
    expect([256, 512, 1024].map((side) => imagePrice(dalle2, image('standard', `${side}x${side}`)))).toEqual([0.016, 0.018, 0.02])
  })

  it('bills GPT Image tokens: text in, image in at its own rate, image out', () => {
    // gpt-image-1: text in $5, image in $10, image out $40 per 1M; gpt-image-1-mini: $2, $2.5, $8.
    const usage = { inputTokens: 1_350, outputTokens: 4_160, imageInputTokens: 1_300 }
    expect(costOf(usage, tablePrice('openai', 'gpt-image-1')!)).toBeCloseTo((50 * 5 + 1_300 * 10 + 4_160 * 40) / 1e6, 15)
    expect(costOf(usage, tablePrice('openai', 'gpt-image-1-mini')!)).toBeCloseTo((50 * 2 + 1_300 * 2.5 + 4_160 * 8) / 1e6, 15)
    expect(tableModelFamily('openai', 'gpt-image-1-2025-04-23')).toBe('gpt-image-1')
    // Image tokens of a model without an image rate bill as text input.
    expect(costOf({ inputTokens: 100, outputTokens: 0, imageInputTokens: 100 }, tablePrice('openai', 'gpt-4o')!)).toBeCloseTo(100 * 2.5e-6, 15)
  })

  it('an override of the per-image price is one price for every quality and size; the image token rate overrides like the others', () => {
    const flat = priceFor('openai', null, 'dall-e-3', null, [override({ provider: 'openai', model: 'dall-e-3', perImage: 0.05 })])!
    expect(costOf({ inputTokens: 0, outputTokens: 0, images: 2, imageVariant: { quality: 'hd', size: '1792x1024' } }, flat)).toBeCloseTo(0.1, 12)
    const tokens = priceFor('openai', null, 'gpt-image-1', null, [override({ provider: 'openai', model: 'gpt-image-1', imageInput: 0.00002 })])!
    expect(tokens).toMatchObject({ imageInput: 0.00002, input: 5e-6, output: 40e-6 })
    // Another override of the model keeps the table's prices by quality and size.
    const other = priceFor('openai', null, 'dall-e-3', null, [override({ provider: 'openai', model: 'dall-e-3', input: 0 })])!
    expect(imagePrice(other, { quality: 'hd', size: '1024x1792' })).toBe(0.12)
  })

  it('publishes prices by quality and size, in cents, and the image token rate', () => {
    const dalle3 = modelPricingConfig(tablePrice('openai', 'dall-e-3')!).pay_as_you_go
    expect(dalle3.image).toMatchObject({ hd: { '1792x1024': { price: 12 } }, standard: { '1024x1024': { price: 4 } }, default: { default: { price: 4 } } })
    const gptImage = modelPricingConfig(tablePrice('openai', 'gpt-image-1')!).pay_as_you_go as { additional_units: { image_token: { price: number } } }
    expect(gptImage.additional_units.image_token.price).toBeCloseTo(0.001, 12)
  })
})
