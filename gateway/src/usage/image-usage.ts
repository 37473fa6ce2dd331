/**
 * Usage of OpenAI's images routes (generations, edits, variations), read from the answers
 * Gatehouse relays untouched:
 *
 *  - GPT Image models (`gpt-image-1`, `gpt-image-1-mini`) report their tokens: `usage: {input_tokens,
 *    input_tokens_details: {text_tokens, image_tokens}, output_tokens}` at the end of the JSON answer,
 *    or in the last `image_generation.completed` / `image_edit.completed` event of a stream;
 *  - DALL·E models report nothing: they bill each image at the price of its quality and size, so
 *    the images are counted (the answer's `data` entries where the answer was kept whole: URLs;
 *    else the `n` asked for: OpenAI makes every image asked for or fails the request) and the
 *    quality and size taken from the request (`standard` and `1024x1024` when it names none).
 *
 * The worst case to reserve before the call is priced from the same request: its images at their
 * quality and size, its body's bytes as a bound of its input tokens, and the image tokens OpenAI
 * documents for the quality and size asked (the largest where it asks for `auto`).
 */
import type { ImageVariant, Usage } from '../providers/canonical.ts'
import { countOf, isEventStreamType, isJsonType, lastUsageObject, type MeteredUsage, type RelayedAnswer } from './relayed-answer.ts'

/** Whether the model's price bills each image (DALL·E) or tokens (GPT Image). */
export type ImageBilling = 'images' | 'tokens'

/** The fields of an images request that decide what it costs: from its JSON body or its upload's form. */
export interface ImageRequest {
  readonly n: number
  readonly size: string | null
  readonly quality: string | null
}

/** OpenAI's limit on `n`. */
const MAX_IMAGES = 10

/** `n`, `size` and `quality` as a request gave them (numbers or, in a form, strings). */
export function imageRequest(field: (name: string) => unknown): ImageRequest {
  const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null)
  const asked = Number(field('n') ?? 1)
  const n = Number.isInteger(asked) && asked >= 1 ? Math.min(asked, MAX_IMAGES) : 1
  return { n, size: text(field('size')), quality: text(field('quality')) }
}

/** The variant a per-image price is looked up by: DALL·E's defaults where the request names none. */
export function imageVariant(request: ImageRequest): ImageVariant {
  return { quality: request.quality ?? 'standard', size: request.size ?? '1024x1024' }
}

/**
 * Image tokens a GPT Image model makes per image, by quality and size (OpenAI's image generation
 * guide); `auto` or an unlisted choice may be the largest.
 */
const OUTPUT_TOKENS_PER_IMAGE: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
}
const MOST_OUTPUT_TOKENS_PER_IMAGE = 6240

/** The most a JSON images request can use, as usage to price (`inputBoundTokens`: its body's bytes). */
export function imageWorstCase(request: ImageRequest, inputBoundTokens: number): Usage {
  const perImage = (request.quality && request.size && OUTPUT_TOKENS_PER_IMAGE[request.quality]?.[request.size]) || MOST_OUTPUT_TOKENS_PER_IMAGE
  return { inputTokens: inputBoundTokens, outputTokens: request.n * perImage, images: request.n, imageVariant: imageVariant(request) }
}

/** A GPT Image answer's `usage` in Gatehouse's terms. */
export function imageTokenUsage(usage: Record<string, unknown>): Usage {
  const details = usage.input_tokens_details as { image_tokens?: unknown } | null | undefined
  const result: Usage = { inputTokens: countOf(usage.input_tokens), outputTokens: countOf(usage.output_tokens) }
  const imageTokens = countOf(details?.image_tokens)
  if (imageTokens > 0) result.imageInputTokens = imageTokens
  return result
}

/** The `data` entries of a JSON answer kept whole; null when it was not (or is not an images answer). */
function imagesInAnswer(answer: RelayedAnswer): number | null {
  if (!answer.whole || !isJsonType(answer.contentType)) return null
  try {
    const data = (JSON.parse(answer.tail) as { data?: unknown }).data
    return Array.isArray(data) ? data.length : null
  } catch {
    return null
  }
}

/** The usage of an images answer that succeeded. */
export function imageUsage(answer: RelayedAnswer, request: ImageRequest, billing: ImageBilling): MeteredUsage {
  const textual = isJsonType(answer.contentType) || isEventStreamType(answer.contentType)
  const reported = textual ? lastUsageObject(answer.tail) : null
  const images = imagesInAnswer(answer) ?? request.n
  const counted: Usage = { ...(reported === null ? { inputTokens: 0, outputTokens: 0 } : imageTokenUsage(reported)), images, imageVariant: imageVariant(request) }
  const unmetered = billing === 'tokens' && reported === null ? 'the tokens: the answer carries no usage' : null
  return { usage: counted, estimated: false, unmetered }
}
