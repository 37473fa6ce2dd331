import OpenAI, { toFile } from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from './base.ts'
import { imageBytes, inputImageTokens } from './openai-images.ts'
import { startOpenAISimulator } from './openai.ts'

let sim: Simulator
let client: OpenAI

beforeAll(async () => {
  sim = await startOpenAISimulator()
  client = new OpenAI({ apiKey: 'sk-simulator', baseURL: sim.baseUrl, maxRetries: 0 })
})
afterEach(() => sim.reset())
afterAll(async () => {
  await sim.close()
})

const png = (size: string, name = 'gate.png') => toFile(imageBytes(size), name, { type: 'image/png' })

describe('DALL·E', () => {
  it('answers URLs or base64 images without usage; dall-e-3 revises the prompt and makes one image', async () => {
    const hd = await client.images.generate({ model: 'dall-e-3', prompt: 'a gate house', quality: 'hd', size: '1792x1024' })
    expect(hd.data).toEqual([{ url: expect.stringMatching(/^https:\/\/simulator\.invalid\/images\//), revised_prompt: 'A detailed rendering of: a gate house' }])
    expect(hd.usage).toBeUndefined()
    const small = await client.images.generate({ model: 'dall-e-2', prompt: 'a gate', n: 3, size: '256x256', response_format: 'b64_json' })
    expect(small.data).toHaveLength(3)
    expect(Buffer.from(small.data![0]!.b64_json!, 'base64').equals(imageBytes('256x256'))).toBe(true)
    await expect(client.images.generate({ model: 'dall-e-3', prompt: 'two', n: 2 })).rejects.toMatchObject({ status: 400, param: 'n' })
    await expect(client.images.generate({ model: 'dall-e-2', prompt: 'wide', size: '1792x1024' })).rejects.toMatchObject({ status: 400, param: 'size' })
  })

  it('edits and varies one uploaded image with dall-e-2; dall-e-3 does neither', async () => {
    const edit = await client.images.edit({ model: 'dall-e-2', prompt: 'add a flag', image: await png('512x512'), n: 2, size: '512x512' })
    expect(edit.data).toHaveLength(2)
    const variation = await client.images.createVariation({ image: await png('1024x1024') })
    expect(variation.data).toHaveLength(1)
    expect(sim.requests.at(-1)!.rawBody.toString('latin1')).not.toContain('name="model"')
    await expect(client.images.edit({ model: 'dall-e-3', prompt: 'no', image: await png('1024x1024') })).rejects.toMatchObject({ status: 400, param: 'model' })
  })
})

describe('GPT Image', () => {
  it('reports its tokens: the prompt, the output tokens of the quality and size asked', async () => {
    const answer = await client.images.generate({ model: 'gpt-image-1', prompt: 'a gate house at dusk', quality: 'high', size: '1024x1536', n: 2 })
    expect(answer).toMatchObject({ quality: 'high', size: '1024x1536', output_format: 'png' })
    expect(answer.data).toHaveLength(2)
    expect(answer.usage).toEqual({ input_tokens: 5, input_tokens_details: { text_tokens: 5, image_tokens: 0 }, output_tokens: 2 * 6240, total_tokens: 5 + 2 * 6240 })
    // auto is answered as a medium square.
    const auto = await client.images.generate({ model: 'gpt-image-1-mini', prompt: 'a gate' })
    expect(auto).toMatchObject({ quality: 'medium', size: '1024x1024', usage: { output_tokens: 1056 } })
    await expect(client.images.generate({ model: 'gpt-image-1', prompt: 'x', response_format: 'url' })).rejects.toMatchObject({ status: 400, param: 'response_format' })
  })

  it('counts the images an edit is given as image input tokens', async () => {
    const edit = await client.images.edit({ model: 'gpt-image-1', prompt: 'merge them', image: [await png('1024x1024', 'a.png'), await png('1536x1024', 'b.png')], quality: 'low' })
    expect(inputImageTokens(imageBytes('1024x1024'))).toBe(85 + 170 * 4)
    expect(edit.usage!.input_tokens_details).toEqual({ text_tokens: 3, image_tokens: 85 + 170 * 4 + 85 + 170 * 6 })
    expect(edit.usage!.output_tokens).toBe(272)
  })

  it('streams partial images, then a completed event with the usage', async () => {
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'a gate house', stream: true, partial_images: 2, quality: 'low', size: '1536x1024' })
    const events: OpenAI.Images.ImageGenStreamEvent[] = []
    for await (const event of stream) events.push(event)
    expect(events.map((event) => event.type)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed'])
    expect(events.at(-1)).toMatchObject({ usage: { input_tokens: 3, output_tokens: 400 }, size: '1536x1024' })
  })
})
