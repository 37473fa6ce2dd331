/**
 * The public pricing lookup's answer (`GET /model-configs/pricing/{provider}/{model}`): the spec's
 * ModelPricingConfig, prices in US cents per unit (per text, audio or image token, per image, per second of audio, per character).
 * Per-image prices go under `image` by quality, then size (`default.default` is the price of an
 * image of any other quality or size); the image input token price under `additional_units.image_token`.
 */
import { tablePrice, type Price } from './price.ts'

const CENTS = 100

export interface ModelPricingConfig {
  pay_as_you_go: Record<string, unknown>
  currency: 'USD'
  version: string
}

export function modelPricingConfig(price: Price): ModelPricingConfig {
  const cents = (value: number | null) => (value === null ? undefined : { price: value * CENTS })
  const payAsYouGo: Record<string, unknown> = {
    request_token: cents(price.input),
    response_token: cents(price.output),
    cache_read_input_token: cents(price.cachedInput),
    cache_write_input_token: cents(price.cacheWrite),
    reasoning_token: cents(price.reasoning),
    request_audio_token: cents(price.audioInput),
    response_audio_token: cents(price.audioOutput),
    cache_read_audio_input_token: cents(price.cachedAudioInput),
  }
  const additional: Record<string, unknown> = {}
  if (price.perImage !== null || price.perImageBy !== null) payAsYouGo.image = imageCents(price)
  if (price.imageInput !== null) additional.image_token = { price: price.imageInput * CENTS }
  if (price.perAudioSecond !== null) additional.audio_seconds = { price: price.perAudioSecond * CENTS }
  if (price.perCharacter !== null) additional.characters = { price: price.perCharacter * CENTS }
  if (price.perSearchUnit !== null) additional.search_units = { price: price.perSearchUnit * CENTS }
  if (price.perPage !== null) additional.pages = { price: price.perPage * CENTS }
  if (Object.keys(additional).length > 0) payAsYouGo.additional_units = additional
  for (const [key, value] of Object.entries(payAsYouGo)) if (value === undefined) delete payAsYouGo[key]
  return { pay_as_you_go: payAsYouGo, currency: 'USD', version: price.version }
}

function imageCents(price: Price): Record<string, Record<string, { price: number }>> {
  const byQuality: Record<string, Record<string, { price: number }>> = {}
  for (const [quality, bySize] of Object.entries(price.perImageBy ?? {})) {
    byQuality[quality] = Object.fromEntries(Object.entries(bySize).map(([size, usd]) => [size, { price: usd * CENTS }]))
  }
  if (price.perImage !== null) byQuality.default = { default: { price: price.perImage * CENTS } }
  return byQuality
}

/** Provider ids of the public API (`azure-openai`, `vertex-ai`...) are Gatehouse's provider kinds; `mistral` is accepted for `mistral-ai`. */
export const PRICING_PROVIDER_ALIASES: Readonly<Record<string, string>> = { mistral: 'mistral-ai', 'azure-ai': 'azure-openai', vertex: 'vertex-ai', gemini: 'google' }

export const PUBLIC_PRICING_PATH = '/model-configs/pricing/:provider/*'

/** The lookup's answer for a provider id and model id (status and body), shared by both planes' routes. */
export function publicPricingAnswer(provider: string, model: string): { status: 200; body: ModelPricingConfig } | { status: 404; body: { error: string } } {
  const kind = PRICING_PROVIDER_ALIASES[provider] ?? provider
  const price = model.length > 0 && model.length <= 512 ? tablePrice(kind, model) : null
  return price ? { status: 200, body: modelPricingConfig(price) } : { status: 404, body: { error: 'Model not found' } }
}
