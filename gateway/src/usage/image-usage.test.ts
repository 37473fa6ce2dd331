import { describe, expect, it } from 'vitest'
import { BodyWindow } from './body-window.ts'
import { imageRequest, imageUsage, imageWorstCase } from './image-usage.ts'

/** An answer as the relay's window keeps it (64 KiB either end by default), pushed in 1 KiB chunks. */
function relayed(body: string, contentType = 'application/json', windowBytes?: number) {
  const window = new BodyWindow(windowBytes)
  const bytes = Buffer.from(body)
  for (let at = 0; at < bytes.length; at += 1024) window.push(bytes.subarray(at, at + 1024))
  return { contentType, ...window.text() }
}

const fields = (values: Record<string, unknown>) => (name: string) => values[name]

describe('imageRequest', () => {
  it('reads n, size and quality from a JSON body or a form, with DALL·E defaults', () => {
    expect(imageRequest(fields({}))).toEqual({ n: 1, size: null, quality: null })
    expect(imageRequest(fields({ n: 3, size: '1792x1024', quality: 'hd' }))).toEqual({ n: 3, size: '1792x1024', quality: 'hd' })
    // A form's values are strings; a nonsense n is one image, more than OpenAI allows is its limit.
    expect(imageRequest(fields({ n: '2', size: '512x512' }))).toMatchObject({ n: 2, size: '512x512' })
    expect(imageRequest(fields({ n: 'lots' })).n).toBe(1)
    expect(imageRequest(fields({ n: 50 })).n).toBe(10)
  })
})

describe('imageUsage', () => {
  const request = imageRequest(fields({ n: 2, size: '1024x1792', quality: 'hd' }))

  it('DALL·E: the images of the answer, at the quality and size asked', () => {
    const answer = JSON.stringify({ created: 1, data: [{ url: 'https://img/1' }, { url: 'https://img/2', revised_prompt: 'the "usage" of a gate' }] })
    expect(imageUsage(relayed(answer), request, 'images')).toEqual({
      usage: { inputTokens: 0, outputTokens: 0, images: 2, imageVariant: { quality: 'hd', size: '1024x1792' } }, estimated: false, unmetered: null,
    })
  })

  it('DALL·E with base64 images too long to keep: the n asked for', () => {
    const big = JSON.stringify({ created: 1, data: [{ b64_json: 'A'.repeat(200_000) }, { b64_json: 'B'.repeat(200_000) }] })
    const answer = relayed(big)
    expect(answer.whole).toBe(false)
    expect(imageUsage(answer, request, 'images').usage).toMatchObject({ images: 2 })
  })

  it('GPT Image: the tokens of the usage at the end of the answer, image input apart; a stream the last completed event', () => {
    const usage = { input_tokens: 1_310, input_tokens_details: { text_tokens: 10, image_tokens: 1_300 }, output_tokens: 4_160, total_tokens: 5_470 }
    const big = JSON.stringify({ created: 1, data: [{ b64_json: 'A'.repeat(300_000) }], quality: 'high', size: '1024x1024', usage })
    expect(imageUsage(relayed(big), imageRequest(fields({})), 'tokens')).toEqual({
      usage: { inputTokens: 1_310, outputTokens: 4_160, imageInputTokens: 1_300, images: 1, imageVariant: { quality: 'standard', size: '1024x1024' } }, estimated: false, unmetered: null,
    })
    const events = [
      `event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', b64_json: 'P'.repeat(90_000), partial_image_index: 0 })}\n\n`,
      `event: image_generation.completed\ndata: ${JSON.stringify({ type: 'image_generation.completed', b64_json: 'C'.repeat(90_000), usage: { ...usage, input_tokens: 10, input_tokens_details: { text_tokens: 10, image_tokens: 0 } } })}\n\n`,
    ].join('')
    expect(imageUsage(relayed(events, 'text/event-stream'), imageRequest(fields({})), 'tokens').usage).toMatchObject({ inputTokens: 10, outputTokens: 4_160, images: 1 })
  })

  it('a token-billed answer without usage leaves its cost unknown', () => {
    expect(imageUsage(relayed(JSON.stringify({ data: [{ b64_json: 'x' }] })), request, 'tokens')).toMatchObject({ unmetered: expect.stringMatching(/no usage/) })
  })
})

describe('imageWorstCase', () => {
  it('its images at their variant, the body bytes as input, and the image tokens of the quality and size asked (the largest for auto)', () => {
    expect(imageWorstCase(imageRequest(fields({ n: 2, quality: 'low', size: '1536x1024' })), 90)).toEqual({
      inputTokens: 90, outputTokens: 800, images: 2, imageVariant: { quality: 'low', size: '1536x1024' },
    })
    expect(imageWorstCase(imageRequest(fields({ quality: 'auto' })), 50)).toMatchObject({ outputTokens: 6_240, images: 1 })
  })
})
