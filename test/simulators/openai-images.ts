/**
 * OpenAI's images routes with what each model reports, so metering can be tested end to end:
 *
 *  - `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart: `image`, or
 *    `image[]` for GPT Image models, and an optional `mask`): `dall-e-2` (the default model) and
 *    `dall-e-3` (generations only, `n: 1`, `quality` `standard` or `hd`) answer `{created, data}`,
 *    each image a `url` or, with `response_format: "b64_json"`, base64 (`revised_prompt` from
 *    dall-e-3), and no usage. `gpt-image-1` and `gpt-image-1-mini` answer base64 images with
 *    `background`, `output_format`, `quality`, `size` and `usage: {input_tokens,
 *    input_tokens_details: {text_tokens, image_tokens}, output_tokens, total_tokens}`; with
 *    `stream: true` (one image), `partial_images` partial events then a completed event carrying
 *    the usage (`image_generation.*`, `image_edit.*`).
 *  - `POST /v1/images/variations` (multipart): `dall-e-2` only, like its generations.
 *
 * Sizes and qualities are checked per model as OpenAI lists them. Output tokens per image are the
 * ones OpenAI's image generation guide gives by quality and size (`auto` is answered as medium and
 * 1024x1024); the prompt's tokens are the simulator's estimate, and an input image counts 85 plus
 * 170 per 512-pixel tile of the size its PNG header says (1024x1024 when it is not a PNG). Images
 * are deterministic PNG-headed bytes, an eighth of a byte per pixel.
 */
import { crc32 } from 'node:zlib'
import type { Exchange } from './base.ts'
import { estimateTokens, sse } from './content.ts'
import { pseudoBytes } from './openai-extra.ts'
import { field, formOf, refuse } from './openai-form.ts'
import { sequenceId } from './reply.ts'
import type { Route } from './router.ts'
import { jsonObject } from './router.ts'

interface ImageModel {
  readonly sizes: readonly string[]
  readonly qualities: readonly string[]
  readonly maxImages: number
  readonly edits: boolean
  readonly tokens: boolean
}

const DALLE_2: ImageModel = { sizes: ['256x256', '512x512', '1024x1024'], qualities: ['standard'], maxImages: 10, edits: true, tokens: false }
const DALLE_3: ImageModel = { sizes: ['1024x1024', '1792x1024', '1024x1792'], qualities: ['standard', 'hd'], maxImages: 1, edits: false, tokens: false }
const GPT_IMAGE: ImageModel = { sizes: ['auto', '1024x1024', '1536x1024', '1024x1536'], qualities: ['auto', 'low', 'medium', 'high'], maxImages: 10, edits: true, tokens: true }
const MODELS: Readonly<Record<string, ImageModel>> = { 'dall-e-2': DALLE_2, 'dall-e-3': DALLE_3, 'gpt-image-1': GPT_IMAGE, 'gpt-image-1-mini': GPT_IMAGE }

/** OpenAI's image generation guide: image tokens out per image, by quality and size. */
export const IMAGE_OUTPUT_TOKENS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
}

const createdAt = 1_767_225_600

/** A field of a request, from its JSON body or its form. */
type Fields = (name: string) => unknown

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** Deterministic bytes with a real PNG signature and header for `size` (`1024x1536`). */
export function imageBytes(size: string): Buffer {
  const [width, height] = size.split('x').map(Number) as [number, number]
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 6, 0, 0, 0], 8)
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('IDAT', pseudoBytes(Math.round((width * height) / 8)))])
}

/** Input image tokens of one uploaded image: 85 + 170 per 512-pixel tile of its PNG size (1024x1024 when unknown). */
export function inputImageTokens(bytes: Uint8Array): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const png = buffer.length >= 24 && buffer.readUInt32BE(0) === 0x89504e47 && buffer.toString('latin1', 12, 16) === 'IHDR'
  const width = png ? buffer.readUInt32BE(16) : 1024
  const height = png ? buffer.readUInt32BE(20) : 1024
  return 85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512)
}

interface Asked {
  readonly modelName: string
  readonly model: ImageModel
  readonly prompt: string
  readonly n: number
  readonly size: string
  readonly quality: string
  readonly base64: boolean
  readonly stream: boolean
  readonly partialImages: number
}

/** The request checked as OpenAI checks it; null once refused. */
function asked(exchange: Exchange, fields: Fields, route: 'generations' | 'edits' | 'variations'): Asked | null {
  const refused = (status: number, message: string, param: string): null => {
    refuse(exchange, status, message, param)
    return null
  }
  const given = (name: string): string | null => {
    const value = fields(name)
    return value === undefined || value === null ? null : String(value)
  }
  const modelName = given('model') ?? 'dall-e-2'
  const model = MODELS[modelName]
  if (!model || !exchange.knowsModel(modelName)) return refused(404, `The model \`${modelName}\` does not exist or you do not have access to it.`, 'model')
  if ((route === 'edits' && !model.edits) || (route === 'variations' && model !== DALLE_2)) return refused(400, `The model \`${modelName}\` is not supported for image ${route}.`, 'model')
  const prompt = given('prompt') ?? ''
  if (route !== 'variations' && prompt === '') return refused(400, "Missing required parameter: 'prompt'.", 'prompt')
  const n = Number(given('n') ?? 1)
  if (!Number.isInteger(n) || n < 1 || n > model.maxImages) {
    return refused(400, model.maxImages === 1 ? `You must provide n=1 for ${modelName}.` : `Invalid 'n': expected an integer between 1 and ${model.maxImages}.`, 'n')
  }
  const size = given('size') ?? (model.tokens ? 'auto' : '1024x1024')
  if (!model.sizes.includes(size)) return refused(400, `Invalid 'size': '${size}' is not one of ${model.sizes.join(', ')} for ${modelName}.`, 'size')
  const quality = given('quality') ?? model.qualities[0]!
  if (!model.qualities.includes(quality)) return refused(400, `Invalid 'quality': '${quality}' is not one of ${model.qualities.join(', ')} for ${modelName}.`, 'quality')
  const format = given('response_format')
  if (format !== null && model.tokens) return refused(400, `Unknown parameter: 'response_format' (${modelName} always answers b64_json).`, 'response_format')
  if (format !== null && format !== 'url' && format !== 'b64_json') return refused(400, "Invalid 'response_format': expected url or b64_json.", 'response_format')
  const stream = given('stream') === 'true'
  if (stream && !model.tokens) return refused(400, `Streaming is not supported for ${modelName}.`, 'stream')
  if (stream && n !== 1) return refused(400, 'The simulator streams one image (n: 1).', 'n')
  const partialImages = Math.min(3, Math.max(0, Number(given('partial_images') ?? 0) || 0))
  return { modelName, model, prompt, n, size, quality, base64: model.tokens || format === 'b64_json', stream, partialImages }
}

async function answer(exchange: Exchange, request: Asked, inputImages: readonly Uint8Array[], route: 'generations' | 'edits' | 'variations'): Promise<void> {
  const { model, n } = request
  if (!model.tokens) {
    const id = sequenceId('img_sim', exchange.sequence)
    const data = Array.from({ length: n }, (_, index) => ({
      ...(request.base64 ? { b64_json: imageBytes(request.size).toString('base64') } : { url: `https://simulator.invalid/images/${id}-${index}.png` }),
      ...(request.modelName === 'dall-e-3' ? { revised_prompt: `A detailed rendering of: ${request.prompt}` } : {}),
    }))
    return exchange.json(200, { created: createdAt, data })
  }
  // GPT Image: `auto` is answered as medium quality, square.
  const quality = request.quality === 'auto' ? 'medium' : request.quality
  const size = request.size === 'auto' ? '1024x1024' : request.size
  const textTokens = estimateTokens(request.prompt)
  const imageTokens = inputImages.reduce((sum, image) => sum + inputImageTokens(image), 0)
  const outputTokens = n * IMAGE_OUTPUT_TOKENS[quality]![size]!
  const usage = { input_tokens: textTokens + imageTokens, input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens }, output_tokens: outputTokens, total_tokens: textTokens + imageTokens + outputTokens }
  const image = imageBytes(size).toString('base64')
  const described = { background: 'opaque', output_format: 'png', quality, size }
  if (!request.stream) return exchange.json(200, { created: createdAt, ...described, data: Array.from({ length: n }, () => ({ b64_json: image })), usage })
  const kind = route === 'edits' ? 'image_edit' : 'image_generation'
  function* events(): Generator<string> {
    for (let index = 0; index < request.partialImages; index++) {
      yield sse({ type: `${kind}.partial_image`, b64_json: image.slice(0, 4096), created_at: createdAt, ...described, partial_image_index: index }, `${kind}.partial_image`)
    }
    yield sse({ type: `${kind}.completed`, b64_json: image, created_at: createdAt, ...described, usage }, `${kind}.completed`)
  }
  await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', frames: events() })
}

async function generations(exchange: Exchange): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return refuse(exchange, 400, 'We could not parse the JSON body of your request.', null)
  const request = asked(exchange, (name) => body[name], 'generations')
  if (request) await answer(exchange, request, [], 'generations')
}

async function uploads(exchange: Exchange, route: 'edits' | 'variations'): Promise<void> {
  const form = await formOf(exchange)
  if (!form) return refuse(exchange, 400, 'Could not parse multipart form', null)
  const request = asked(exchange, (name) => field(form, name) ?? undefined, route)
  if (!request) return
  const files = [...form.getAll('image'), ...form.getAll('image[]')].filter((value): value is File => value instanceof Blob)
  if (files.length === 0) return refuse(exchange, 400, "'image' is a required property", 'image')
  if (files.length > 1 && !request.model.tokens) return refuse(exchange, 400, `${request.modelName} takes one image.`, 'image')
  const images = await Promise.all(files.map(async (file) => new Uint8Array(await file.arrayBuffer())))
  await answer(exchange, request, images, route)
}

export const openaiImageRoutes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/images\/generations$/, handle: generations },
  { method: 'POST', pattern: /^\/v1\/images\/edits$/, handle: (exchange) => uploads(exchange, 'edits') },
  { method: 'POST', pattern: /^\/v1\/images\/variations$/, handle: (exchange) => uploads(exchange, 'variations') },
]
