/**
 * Images metered end to end: the official `openai` SDK through Gatehouse to the OpenAI simulator,
 * and the usage record each request produces. DALL·E images are counted and priced by their
 * quality and size; GPT Image models by the tokens they report, image input at its own rate.
 * Records come from the shipper's serialised batches, so they passed the contract schema.
 */
import OpenAI, { toFile } from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { tablePrice } from '../../gateway/src/pricing/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { ShippedRecords } from '../helpers/usage-records.ts'
import { imageBytes, inputImageTokens } from '../simulators/openai-images.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

let simulator: Simulator
let gateway: TestGateway
let client: OpenAI
const shipped = new ShippedRecords()

beforeAll(async () => {
  simulator = await startOpenAISimulator()
  gateway = await startTestGateway([{ slug: 'openai', kind: 'openai', baseUrl: simulator.baseUrl }], { usage: shipped.shipper })
  client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai' } })
})
afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})
beforeEach(async () => {
  await shipped.clear()
  simulator.reset()
})

async function record(): Promise<UsageRecord> {
  const records = await shipped.wait()
  expect(records).toHaveLength(1)
  return records[0]!
}

const png = (size: string, name = 'gate.png') => toFile(imageBytes(size), name, { type: 'image/png' })
const gptImage = () => tablePrice('openai', 'gpt-image-1')!

describe('DALL·E: per image, by quality and size', () => {
  it('dall-e-3 hd wide: one image at $0.12', async () => {
    const answer = await client.images.generate({ model: 'dall-e-3', prompt: 'a gate house', quality: 'hd', size: '1792x1024' })
    expect(answer.data![0]!.url).toMatch(/^https:/)
    const got = await record()
    expect(got).toMatchObject({
      route: 'passthrough:images', endpointType: 'imageGenerate', statusCode: 200, modelRequested: 'dall-e-3', modelServed: 'dall-e-3',
      images: 1, inputTokens: 0, outputTokens: 0, estimated: false, pricingVersion: 'gatehouse-2026-11-29.2',
    })
    expect(got.costUsd).toBeCloseTo(0.12, 12)
  })

  it('dall-e-2: the images of an answer kept whole, or the n asked for when base64 images are too long to keep', async () => {
    await client.images.generate({ model: 'dall-e-2', prompt: 'a gate', n: 3, size: '256x256' })
    const urls = await record()
    expect(urls).toMatchObject({ images: 3 })
    expect(urls.costUsd).toBeCloseTo(3 * 0.016, 12)

    await shipped.clear()
    const answer = await client.images.generate({ model: 'dall-e-2', prompt: 'a gate', n: 2, response_format: 'b64_json' })
    // Two 1024x1024 images: far beyond the relay's 64 KiB windows.
    expect(answer.data!.reduce((sum, image) => sum + image.b64_json!.length, 0)).toBeGreaterThan(300_000)
    const b64 = await record()
    expect(b64).toMatchObject({ images: 2 })
    expect(b64.costUsd).toBeCloseTo(2 * 0.02, 12)
  })

  it('variations: dall-e-2 when the form names no model, its size and n read from the form', async () => {
    await client.images.createVariation({ image: await png('512x512'), n: 2, size: '512x512' })
    const got = await record()
    expect(got).toMatchObject({ route: 'passthrough:images', modelServed: 'dall-e-2', images: 2 })
    expect(got.costUsd).toBeCloseTo(2 * 0.018, 12)
  })

  it('a refused request makes no image and costs nothing', async () => {
    await expect(client.images.generate({ model: 'dall-e-3', prompt: 'two', n: 2 })).rejects.toMatchObject({ status: 400 })
    const got = await record()
    expect(got).toMatchObject({ statusCode: 400, images: 0, costUsd: 0 })
    expect(got.annotations.unmetered).toBeUndefined()
  })
})

describe('GPT Image: by token', () => {
  it('images.generate: the usage it reports, output image tokens at $40 per 1M', async () => {
    const answer = await client.images.generate({ model: 'gpt-image-1', prompt: 'a gate house at dusk', quality: 'high', size: '1024x1536' })
    const usage = answer.usage!
    expect(usage.output_tokens).toBe(6240)
    const got = await record()
    expect(got).toMatchObject({ modelServed: 'gpt-image-1', images: 1, inputTokens: usage.input_tokens, outputTokens: 6240, imageInputTokens: 0, estimated: false })
    expect(got.costUsd).toBeCloseTo(usage.input_tokens * 5e-6 + 6240 * 40e-6, 15)
    expect(got.costUsd).toBeCloseTo(usage.input_tokens * gptImage().input + 6240 * gptImage().output, 15)
  })

  it('an edit of two uploaded images: their image tokens at the image input rate, the model read from the form after the files', async () => {
    const edit = await client.images.edit({ image: [await png('1024x1024', 'a.png'), await png('1536x1024', 'b.png')], prompt: 'merge them', quality: 'low', model: 'gpt-image-1' })
    const imageTokens = inputImageTokens(imageBytes('1024x1024')) + inputImageTokens(imageBytes('1536x1024'))
    expect(edit.usage!.input_tokens_details.image_tokens).toBe(imageTokens)
    const got = await record()
    expect(got).toMatchObject({ modelServed: 'gpt-image-1', modelRequested: 'gpt-image-1', imageInputTokens: imageTokens, outputTokens: 272 })
    const textTokens = edit.usage!.input_tokens_details.text_tokens
    expect(got.costUsd).toBeCloseTo(textTokens * 5e-6 + imageTokens * 10e-6 + 272 * 40e-6, 15)
  })

  it('streamed: the usage of the completed event', async () => {
    const stream = await client.images.generate({ model: 'gpt-image-1-mini', prompt: 'a gate house', stream: true, partial_images: 2, quality: 'medium', size: '1536x1024' })
    let completed: OpenAI.Images.ImageGenCompletedEvent | undefined
    for await (const event of stream) if (event.type === 'image_generation.completed') completed = event
    const got = await record()
    expect(got).toMatchObject({ streamed: true, modelServed: 'gpt-image-1-mini', inputTokens: completed!.usage.input_tokens, outputTokens: 1568, images: 1 })
    expect(got.costUsd).toBeCloseTo(completed!.usage.input_tokens * 2e-6 + 1568 * 8e-6, 15)
  })
})
