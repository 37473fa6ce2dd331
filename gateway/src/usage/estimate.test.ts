import { describe, expect, it } from 'vitest'
import { countText } from './estimate.ts'

// The tokenizer costs about 66 MB resident, so a gateway loads it only when it first has to count.
// Break tried: dropping the load from countText made the second test fail (17, not 12).
describe('countText', () => {
  const text = 'Gatehouse counts tokens itself only when a provider reports none.'

  it('counts characters / 4 until the encoding is loaded', () => {
    expect(countText(text)).toBe(Math.ceil(text.length / 4))
  })

  it('starts loading the encoding on that first count, then counts with it', async () => {
    const deadline = Date.now() + 15_000
    while (countText(text) === Math.ceil(text.length / 4) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    // o200k_base: 12 tokens for this sentence, against 17 by the character rule.
    expect(countText(text)).toBe(12)
  })
})
