/**
 * Metering of the passthrough routes whose answers are billed (audio: speech, transcriptions,
 * translations; images: generations, edits, variations): the answer is relayed untouched, and read
 * on its way through a bounded window (usage/body-window.ts) for its usage (usage/audio-usage.ts,
 * usage/image-usage.ts). A multipart upload names its model (and an image's size, quality and
 * count) only inside the form, so the upload is scanned for those fields as it streams to the
 * provider. The usage lands on the exchange's facts when the answer ends, however it ends, before
 * the limits stage settles the request's reservation and the account stage records it.
 *
 * Each route's meter also says the most a request can cost before it is sent (`worstCase`, which
 * the limits stage reserves), where its JSON body says enough; an upload says nothing before it
 * has streamed through.
 */
import type { Readable } from 'node:stream'
import { inputTokenBound } from '../../limits/estimate.ts'
import { MultipartFieldScanner, scannedUpload } from '../../pipeline/multipart-field.ts'
import type { Exchange } from '../../pipeline/stage.ts'
import { exchangePrice } from '../../pipeline/stages/exchange-price.ts'
import type { Price } from '../../pricing/index.ts'
import type { Usage } from '../../providers/canonical.ts'
import { audioUsage, speechWorstCase, type AudioBilling, type AudioRoute, type SpeechRequest } from '../../usage/audio-usage.ts'
import { BodyWindow } from '../../usage/body-window.ts'
import { imageRequest, imageUsage, imageWorstCase } from '../../usage/image-usage.ts'
import type { MeteredUsage, RelayedAnswer } from '../../usage/relayed-answer.ts'

type JsonBody = Record<string, unknown>

/** A request field, from the JSON body or the upload's form. */
type FieldOf = (name: string) => unknown

/** How one route's answers are metered. */
export interface RelayMeter {
  /** Fields of an upload's form the meter reads, besides `model`. */
  readonly formFields: readonly string[]
  /** The model an upload that names none goes to (variations: DALL·E 2 is the only one). */
  readonly defaultModel?: string
  /** The usage of an answer that succeeded, given the request's fields and the served model's price. */
  read(answer: RelayedAnswer, field: FieldOf, price: Price | null): MeteredUsage
  /** The most the request can use, as usage to price; null when its body does not say (uploads). */
  worstCase(body: JsonBody | null): Usage | null
}

function speechRequest(field: FieldOf): SpeechRequest {
  const text = (value: unknown): string => (typeof value === 'string' ? value : '')
  return { input: text(field('input')), instructions: text(field('instructions')) }
}

function audioBilling(price: Price | null): AudioBilling {
  if (price?.perAudioSecond != null) return 'seconds'
  if (price?.perCharacter != null) return 'characters'
  return 'tokens'
}

function audioMeter(route: AudioRoute): RelayMeter {
  return {
    formFields: [],
    read: (answer, field, price) => audioUsage(route, answer, audioBilling(price), route === 'speech' ? speechRequest(field) : null),
    worstCase: (body) => (route === 'speech' && body !== null ? speechWorstCase(speechRequest((name) => body[name])) : null),
  }
}

function imageMeter(defaultModel?: string): RelayMeter {
  return {
    formFields: ['n', 'size', 'quality'],
    ...(defaultModel === undefined ? {} : { defaultModel }),
    read: (answer, field, price) => imageUsage(answer, imageRequest(field), price?.perImage != null || price?.perImageBy != null ? 'images' : 'tokens'),
    worstCase: (body) => (body === null ? null : imageWorstCase(imageRequest((name) => body[name]), inputTokenBound(body))),
  }
}

const METERS: Readonly<Record<string, RelayMeter>> = {
  '/v1/audio/speech': audioMeter('speech'),
  '/v1/audio/transcriptions': audioMeter('transcription'),
  '/v1/audio/translations': audioMeter('translation'),
  '/v1/images/generations': imageMeter(),
  '/v1/images/edits': imageMeter(),
  '/v1/images/variations': imageMeter('dall-e-2'),
}

/** The meter of a passthrough path, or null for the groups that are not billed by their answers. */
export function relayMeterOf(path: string): RelayMeter | null {
  return METERS[path] ?? null
}

/** Usage is written in JSON, text and event streams; audio and image bytes carry none and are not copied. */
const TEXTUAL = /json|^text\//

/** One request's metering: its upload on the way out, its answer on the way back. */
export class RelayMetering {
  readonly #exchange: Exchange
  readonly #meter: RelayMeter
  readonly #form: ReadonlyMap<string, MultipartFieldScanner>

  constructor(exchange: Exchange, meter: RelayMeter) {
    this.#exchange = exchange
    this.#meter = meter
    this.#form = new Map(['model', ...meter.formFields].map((name) => [name, new MultipartFieldScanner(name)]))
  }

  /** The upload on its way to the provider, the fields the meter reads noted. */
  upload(upload: Readable): Readable {
    return scannedUpload(upload, [...this.#form.values()])
  }

  /** The answer on its way to the client; its usage is on the facts once it ended. */
  answer(body: AsyncIterable<Uint8Array>, status: number, contentType: string): AsyncIterable<Uint8Array> {
    const window = new BodyWindow()
    const readable = TEXTUAL.test(contentType)
    const settle = (): void => this.#settle(window, status, contentType)
    return (async function* metered() {
      try {
        for await (const chunk of body) {
          if (readable) window.push(chunk)
          yield chunk
        }
      } finally {
        settle()
      }
    })()
  }

  #field(name: string): unknown {
    return this.#exchange.body?.[name] ?? this.#form.get(name)?.value ?? undefined
  }

  #settle(window: BodyWindow, status: number, contentType: string): void {
    const exchange = this.#exchange
    const facts = exchange.facts
    const uploaded = this.#form.get('model')!.value ?? (exchange.upload === null ? null : this.#meter.defaultModel ?? null)
    if (uploaded !== null && !facts.upstreamModel) {
      // The form's model went to the provider as it was written.
      facts.upstreamModel = uploaded
      facts.requestedModel ??= uploaded
    }
    if (status >= 400) {
      // A refused request is not billed.
      facts.usage = { inputTokens: 0, outputTokens: 0 }
      return
    }
    const price = exchangePrice(exchange, facts.servedModel ?? facts.upstreamModel)
    const metered = this.#meter.read({ contentType, ...window.text() }, (name) => this.#field(name), price)
    facts.usage = metered.usage
    facts.usageEstimated = metered.estimated
    facts.unmetered = metered.unmetered
  }
}
