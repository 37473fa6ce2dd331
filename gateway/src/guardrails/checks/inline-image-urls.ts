/**
 * `default.inlineImageUrls`: fetches the images a request links to (`image_url` parts of chat
 * messages, `url` image sources of Anthropic messages) and puts them inline as base64, for
 * providers that cannot fetch URLs themselves. Fetched through the SSRF-safe dispatcher (a
 * tenant chooses the URL), at most `maxSizeBytes` each (default 20 MiB), all within `timeoutMs`
 * (default 30000); only `image/*` answers are inlined. `providers` limits it to those provider
 * kinds (when the provider is known before dispatch). A failed fetch leaves the URL as it was and
 * passes, unless `failOnError` is set.
 */
import { request } from '../../core/undici.ts'
import type { Dispatcher } from 'undici'
import { z } from 'zod'
import { defineCheck, type CheckOutcome } from './check.ts'

export const INLINE_IMAGE_MAX_SIZE_BYTES_DEFAULT = 20 * 1024 * 1024
export const INLINE_IMAGE_TIMEOUT_MS_DEFAULT = 30_000
const MAX_IMAGES = 16

type Part = Record<string, unknown>

interface ImageRef {
  readonly url: string
  /** Replaces the part with its inline form. */
  readonly inline: (mime: string, base64: string) => Part
}

/** Stops reading an answer: the socket is dropped, and the abort that follows is expected. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined)
  body.destroy()
}

async function fetchImage(url: string, maxSizeBytes: number, dispatcher: Dispatcher, signal: AbortSignal): Promise<{ mime: string; base64: string }> {
  const response = await request(url, { method: 'GET', dispatcher, signal, maxRedirections: 0 } as Parameters<typeof request>[1])
  const mime = String(response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (response.statusCode !== 200) {
    discard(response.body)
    throw new Error(`${url} answered HTTP ${response.statusCode}`)
  }
  if (!mime.startsWith('image/')) {
    discard(response.body)
    throw new Error(`${url} is not an image (${mime || 'no content type'})`)
  }
  const declared = Number(response.headers['content-length'] ?? NaN)
  if (declared > maxSizeBytes) {
    discard(response.body)
    throw new Error(`${url} is larger than ${maxSizeBytes} bytes`)
  }
  const parts: Buffer[] = []
  let size = 0
  for await (const part of response.body) {
    size += (part as Buffer).length
    if (size > maxSizeBytes) {
      discard(response.body)
      throw new Error(`${url} is larger than ${maxSizeBytes} bytes`)
    }
    parts.push(part as Buffer)
  }
  return { mime, base64: Buffer.concat(parts).toString('base64') }
}

const isRemote = (url: unknown): url is string => typeof url === 'string' && /^https?:\/\//i.test(url)

/** The remote images of a request, each with how to put it inline; `rebuild` applies the replacements. */
function imagesOf(body: Readonly<Record<string, unknown>>): { refs: Array<{ message: number; part: number; ref: ImageRef }> } {
  const refs: Array<{ message: number; part: number; ref: ImageRef }> = []
  const messages = Array.isArray(body.messages) ? (body.messages as Part[]) : []
  messages.forEach((message, m) => {
    if (!Array.isArray(message.content)) return
    ;(message.content as Part[]).forEach((part, p) => {
      const imageUrl = part.image_url as Part | undefined
      if (part.type === 'image_url' && isRemote(imageUrl?.url)) {
        refs.push({ message: m, part: p, ref: { url: imageUrl.url, inline: (mime, data) => ({ ...part, image_url: { ...imageUrl, url: `data:${mime};base64,${data}` } }) } })
      }
      const source = part.source as Part | undefined
      if (part.type === 'image' && source?.type === 'url' && isRemote(source.url)) {
        refs.push({ message: m, part: p, ref: { url: source.url, inline: (mime, data) => ({ ...part, source: { type: 'base64', media_type: mime, data } }) } })
      }
    })
  })
  return { refs: refs.slice(0, MAX_IMAGES) }
}

export const inlineImageUrls = defineCheck({
  id: 'default.inlineImageUrls',
  parameters: z.object({
    providers: z.array(z.string().min(1)).min(1).optional(),
    maxSizeBytes: z.int().min(1).max(100 * 1024 * 1024).default(INLINE_IMAGE_MAX_SIZE_BYTES_DEFAULT),
    timeoutMs: z.int().min(1).max(120_000).default(INLINE_IMAGE_TIMEOUT_MS_DEFAULT),
    failOnError: z.boolean().default(false),
  }),
  compile({ providers, maxSizeBytes, timeoutMs, failOnError }, { dispatcher }) {
    const only = providers ? new Set(providers) : null
    return {
      timeoutMs,
      failOnError,
      mutates: true,
      failsEarly: false,
      async run({ body, hook, providerKind, signal }): Promise<CheckOutcome> {
        if (hook !== 'beforeRequestHook' || body === null) return { verdict: true, explanation: 'no request images' }
        if (only && providerKind !== null && !only.has(providerKind)) return { verdict: true, explanation: `provider ${providerKind} fetches image URLs itself` }
        const { refs } = imagesOf(body)
        if (refs.length === 0) return { verdict: true, explanation: 'no image URLs' }
        const fetched = await Promise.all(refs.map(({ ref }) => fetchImage(ref.url, maxSizeBytes, dispatcher, signal)))
        const messages = (body.messages as Part[]).map((message) => ({ ...message, content: Array.isArray(message.content) ? [...(message.content as Part[])] : message.content }))
        refs.forEach(({ message, part, ref }, index) => {
          ;(messages[message]!.content as Part[])[part] = ref.inline(fetched[index]!.mime, fetched[index]!.base64)
        })
        return { verdict: true, explanation: `${refs.length} image(s) inlined`, body: { ...body, messages } }
      },
    }
  },
})
