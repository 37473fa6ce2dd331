/**
 * The shipped pricing table: public list prices of the model families Gatehouse speaks, as data.
 * Units: USD per 1,000,000 tokens (text, audio and image tokens), USD per image, USD per second of audio, USD per
 * character of input (speech), USD per search unit (rerank) and per page (OCR). Standard (non-batch, non-priority) tier; where a
 * provider charges long prompts more, the row carries that band (`LongPromptBand`). Workspaces and integrations override any row
 * through the admin API (snapshot `prices`); a model missing here costs nothing until priced.
 *
 * Rows are looked up by exact model id, then by the id without its release tags (dates, snapshot
 * numbers, versions, channels: `claude-3-5-sonnet-20241022`, `gpt-4o-mini-2024-07-18`,
 * `mistral-large-latest` find their model's row; price.ts). A model's own version or size is no
 * tag: `claude-opus-4-8` and `gpt-5.5-pro` each need a row, and a model without one is unpriced.
 */

export const PRICING_TABLE_VERSION = 'gatehouse-2026-11-29.2'

/**
 * A dearer band for long prompts: a request whose input (cached and cache-written tokens included)
 * passes `aboveInputTokens` bills every token at the row's rates times these factors, input-side
 * rates (input, cached input, cache writes) by `inputFactor`, output-side ones by `outputFactor`.
 */
export interface LongPromptBand {
  readonly aboveInputTokens: number
  readonly inputFactor: number
  readonly outputFactor: number
}

/** [input, output, cached input, cache write] in USD per 1M tokens, and a long-prompt band; reasoning tokens bill as output. */
export type TokenRow = readonly [input: number, output: number, cachedInput?: number | null, cacheWrite?: number | null, longPrompt?: LongPromptBand]

/** Past 272,000 input tokens, twice the input-side rates and 1.5 times the output: GPT-6. */
const OPENAI_LONG_PROMPT: LongPromptBand = { aboveInputTokens: 272_000, inputFactor: 2, outputFactor: 1.5 }
/** Past 200,000 input tokens (a 1M-token context): twice the input-side rates and 1.5 times the output. */
const LONG_CONTEXT_200K: LongPromptBand = { aboveInputTokens: 200_000, inputFactor: 2, outputFactor: 1.5 }
/** Claude Haiku 5.5: past 100,000 prompt tokens, five times every rate. */
const HAIKU_5_5_LONG_PROMPT: LongPromptBand = { aboveInputTokens: 100_000, inputFactor: 5, outputFactor: 5 }

/** USD per image by quality, then size: `{standard: {'1024x1024': 0.04}}` (the public pricing route's `image` shape). */
export type ImagePrices = Readonly<Record<string, Readonly<Record<string, number>>>>

export interface UnitRow {
  /** Per image of a quality and size the row does not list (or of any, where it lists none). */
  readonly perImage?: number
  readonly perImageBy?: ImagePrices
  readonly perAudioSecond?: number
  /** Speech models billed by the character of their input (tts-1). */
  readonly perCharacter?: number
  readonly perSearchUnit?: number
  readonly perPage?: number
}

/** [audio input, audio output, cached audio input] in USD per 1M audio tokens. */
export type AudioTokenRow = readonly [input: number, output: number, cachedInput?: number | null]

/** A model that takes or speaks audio as tokens (realtime, audio chat): text and audio tokens at their own rates. */
export interface AudioRow {
  readonly text: TokenRow
  readonly audio: AudioTokenRow
}

/**
 * A GPT Image model: text tokens in, image tokens in (the images it edits) at their own rate, and
 * image tokens out at the text row's output rate (its only output). Cached image input has a price
 * too, but the Images API reports no cached tokens, so it is not carried.
 */
export interface ImageTokenRow {
  readonly text: TokenRow
  /** USD per 1M image input tokens. */
  readonly imageInput: number
}

export type PriceRow = TokenRow | UnitRow | AudioRow | ImageTokenRow

/**
 * GPT-5.4 and GPT-5.5 have a dearer band past about 270,000 input tokens too, whose threshold and
 * factors no source agreed on: their rows bill every request at the shorter requests' rates.
 */
const openai: Record<string, PriceRow> = {
  'gpt-6.1-sol': [2, 10, 0.1, null, OPENAI_LONG_PROMPT],
  'gpt-6-astra': [10, 50, 1, null, OPENAI_LONG_PROMPT],
  'gpt-6-sol': [2, 10, 0.2, null, OPENAI_LONG_PROMPT],
  'gpt-6-luna': [0.1, 0.5, 0.01, null, OPENAI_LONG_PROMPT],
  'gpt-5.5': [5, 30, 0.5],
  'gpt-5.5-pro': [30, 180],
  'gpt-5.4': [2.5, 15, 0.25],
  'gpt-5.4-pro': [30, 180],
  'gpt-5.4-mini': [0.75, 4.5, 0.075],
  'gpt-5.4-nano': [0.2, 1.25, 0.02],
  'gpt-5.2': [1.75, 14, 0.175],
  'gpt-5': [1.25, 10, 0.125],
  'gpt-5-mini': [0.25, 2, 0.025],
  'gpt-5-nano': [0.05, 0.4, 0.005],
  'gpt-4.1': [2, 8, 0.5],
  'gpt-4.1-mini': [0.4, 1.6, 0.1],
  'gpt-4.1-nano': [0.1, 0.4, 0.025],
  'gpt-4o': [2.5, 10, 1.25],
  'gpt-4o-mini': [0.15, 0.6, 0.075],
  // Realtime and audio models price audio tokens per token, apart from text tokens.
  'gpt-realtime': { text: [4, 16, 0.4], audio: [32, 64, 0.4] },
  'gpt-realtime-mini': { text: [0.6, 2.4, 0.06], audio: [10, 20, 0.3] },
  'gpt-4o-realtime-preview': { text: [5, 20, 2.5], audio: [40, 80, 2.5] },
  'gpt-4o-mini-realtime-preview': { text: [0.6, 2.4, 0.3], audio: [10, 20, 0.3] },
  'gpt-audio': { text: [2.5, 10], audio: [32, 64] },
  'gpt-audio-mini': { text: [0.6, 2.4], audio: [10, 20] },
  'gpt-4o-audio-preview': { text: [2.5, 10], audio: [40, 80] },
  'gpt-4o-mini-audio-preview': { text: [0.15, 0.6], audio: [10, 20] },
  'gpt-4-turbo': [10, 30],
  'gpt-4': [30, 60],
  'gpt-3.5-turbo': [0.5, 1.5],
  'gpt-3.5-turbo-instruct': [1.5, 2],
  'o1': [15, 60, 7.5],
  'o1-pro': [150, 600],
  'o1-mini': [1.1, 4.4, 0.55],
  'o3': [2, 8, 0.5],
  'o3-pro': [20, 80],
  'o3-mini': [1.1, 4.4, 0.55],
  'o4-mini': [1.1, 4.4, 0.275],
  'text-embedding-3-small': [0.02, 0],
  'text-embedding-3-large': [0.13, 0],
  'text-embedding-ada-002': [0.1, 0],
  'omni-moderation-latest': [0, 0],
  // DALL·E bills each image by its quality and size; GPT Image models by token (text and image in, image out).
  'dall-e-3': {
    perImage: 0.04,
    perImageBy: { standard: { '1024x1024': 0.04, '1024x1792': 0.08, '1792x1024': 0.08 }, hd: { '1024x1024': 0.08, '1024x1792': 0.12, '1792x1024': 0.12 } },
  },
  'dall-e-2': { perImage: 0.02, perImageBy: { standard: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } } },
  'gpt-image-1': { text: [5, 40, 1.25], imageInput: 10 },
  'gpt-image-1-mini': { text: [2, 8, 0.2], imageInput: 2.5 },
  // Transcription: whisper-1 by the second of audio; the gpt-4o transcribers by token, audio input at its own rate.
  'whisper-1': { perAudioSecond: 0.0001 },
  'gpt-4o-transcribe': { text: [2.5, 10], audio: [6, 0] },
  'gpt-4o-mini-transcribe': { text: [1.25, 5], audio: [3, 0] },
  // Speech: tts-1 by the character of input; gpt-4o-mini-tts by token (its output tokens are all audio).
  'tts-1': { perCharacter: 0.000015 },
  'tts-1-hd': { perCharacter: 0.00003 },
  'gpt-4o-mini-tts': [0.6, 12],
}

/**
 * Every Claude model the pricing page lists, each with its own row (a version is not a release
 * tag: price.ts). Cache reads are not always a tenth of input: Fable 5.1 0.025 ×, Opus 5.5 and
 * Sonnet 5.5 0.05 ×.
 */
const anthropic: Record<string, PriceRow> = {
  'claude-fable-5-2': [8, 40, 0.2, 10],
  'claude-fable-5-1': [10, 50, 0.25, 12.5],
  'claude-fable-5': [10, 50, 1, 12.5],
  // Mythos (by invitation) shares its Fable's specifications and prices.
  'claude-mythos-5-1': [10, 50, 0.25, 12.5],
  'claude-mythos-5': [10, 50, 1, 12.5],
  'claude-opus-5-5': [4, 20, 0.2, 5],
  'claude-opus-5': [5, 25, 0.5, 6.25],
  'claude-opus-4-8': [5, 25, 0.5, 6.25],
  'claude-opus-4-7': [5, 25, 0.5, 6.25],
  'claude-opus-4-6': [5, 25, 0.5, 6.25],
  'claude-opus-4-5': [5, 25, 0.5, 6.25],
  'claude-opus-4-1': [15, 75, 1.5, 18.75],
  'claude-opus-4': [15, 75, 1.5, 18.75],
  // Sonnet 5.5's cache reads: $0.10 since 2026-10-07 ($0.20 before).
  'claude-sonnet-5-5': [2, 10, 0.1, 2.5],
  'claude-sonnet-5': [2, 10, 0.2, 2.5],
  'claude-sonnet-4-6': [3, 15, 0.3, 3.75],
  // Their 1M-token context (a beta) bills prompts past 200,000 tokens at the long-context rates; Sonnet 4.6 has none.
  'claude-sonnet-4-5': [3, 15, 0.3, 3.75, LONG_CONTEXT_200K],
  'claude-sonnet-4': [3, 15, 0.3, 3.75, LONG_CONTEXT_200K],
  'claude-haiku-5-5': [0.1, 0.5, 0.01, 0.125, HAIKU_5_5_LONG_PROMPT],
  'claude-haiku-4-5': [1, 5, 0.1, 1.25],
  'claude-3-7-sonnet': [3, 15, 0.3, 3.75],
  'claude-3-5-sonnet': [3, 15, 0.3, 3.75],
  'claude-3-5-haiku': [0.8, 4, 0.08, 1],
  'claude-3-opus': [15, 75, 1.5, 18.75],
  'claude-3-haiku': [0.25, 1.25, 0.03, 0.3],
}

const google: Record<string, PriceRow> = {
  // Gemini 3: input at the text, image and video rate (audio input costs more: $1 against $0.50 on 3 Flash, billed here as text).
  'gemini-3.1-pro': [2, 12, 0.2, null, LONG_CONTEXT_200K],
  'gemini-3-pro': [2, 12, 0.2, null, LONG_CONTEXT_200K],
  'gemini-3-flash': [0.5, 3, 0.05],
  'gemini-3.1-flash-lite': [0.25, 1.5, 0.025],
  'gemini-2.5-pro': [1.25, 10, 0.125, null, LONG_CONTEXT_200K],
  'gemini-2.5-flash': [0.3, 2.5, 0.03],
  'gemini-2.5-flash-lite': [0.1, 0.4, 0.01],
  'gemini-2.0-flash': [0.1, 0.4, 0.025],
  'gemini-2.0-flash-lite': [0.075, 0.3],
  'gemini-1.5-pro': [1.25, 5],
  'gemini-1.5-flash': [0.075, 0.3],
  'gemini-embedding-001': [0.15, 0],
  'text-embedding-004': [0, 0],
}

const cohere: Record<string, PriceRow> = {
  'command-a': [2.5, 10],
  'command-r-plus': [2.5, 10],
  'command-r': [0.15, 0.6],
  'command-r7b': [0.0375, 0.15],
  'embed-english-v3.0': [0.1, 0],
  'embed-multilingual-v3.0': [0.1, 0],
  'embed-v4.0': [0.12, 0],
  'rerank-v3.5': { perSearchUnit: 0.002 },
  'rerank-english-v3.0': { perSearchUnit: 0.002 },
  'rerank-multilingual-v3.0': { perSearchUnit: 0.002 },
}

const mistral: Record<string, PriceRow> = {
  'mistral-large': [2, 6],
  'mistral-medium': [0.4, 2],
  'mistral-small': [0.1, 0.3],
  'codestral': [0.3, 0.9],
  'pixtral-large': [2, 6],
  'open-mistral-nemo': [0.15, 0.15],
  'ministral-8b': [0.1, 0.1],
  'ministral-3b': [0.04, 0.04],
  'mistral-embed': [0.1, 0],
  'mistral-ocr': { perPage: 0.001 },
}

/** Models only Bedrock sells (Amazon's own, Meta's through Bedrock), by their id without the vendor prefix. */
const bedrockOwn: Record<string, PriceRow> = {
  'nova-premier': [2.5, 12.5],
  'nova-pro': [0.8, 3.2, 0.2],
  'nova-lite': [0.06, 0.24, 0.015],
  'nova-micro': [0.035, 0.14, 0.00875],
  'titan-embed-text-v2': [0.02, 0],
  'titan-text-express': [0.2, 0.6],
  'llama3-3-70b-instruct': [0.72, 0.72],
  'llama3-1-70b-instruct': [0.72, 0.72],
  'llama3-1-8b-instruct': [0.22, 0.22],
}

const groq: Record<string, PriceRow> = {
  'llama-3.3-70b-versatile': [0.59, 0.79],
  'llama-3.1-8b-instant': [0.05, 0.08],
}

const deepseek: Record<string, PriceRow> = {
  'deepseek-chat': [0.28, 0.42, 0.028],
  'deepseek-reasoner': [0.28, 0.42, 0.028],
}

const xai: Record<string, PriceRow> = {
  'grok-4': [3, 15, 0.75],
  'grok-3': [3, 15, 0.75],
  'grok-3-mini': [0.3, 0.5, 0.075],
}

/**
 * Tables by provider kind. A kind that resells another family's models lists that family's
 * table after its own (Azure OpenAI sells OpenAI's models; Vertex AI sells Gemini and Claude;
 * Bedrock sells Claude, Command, Mistral and its own).
 */
export const PRICING_TABLES: Readonly<Record<string, readonly Record<string, PriceRow>[]>> = {
  openai: [openai],
  'azure-openai': [openai],
  anthropic: [anthropic],
  google: [google],
  'vertex-ai': [google, anthropic],
  bedrock: [bedrockOwn, anthropic, cohere, mistral],
  cohere: [cohere],
  'mistral-ai': [mistral],
  groq: [groq],
  deepseek: [deepseek],
  'x-ai': [xai],
}

/** Servers on the caller's own hardware: priced at zero rather than unknown. */
export const FREE_KINDS: ReadonlySet<string> = new Set(['ollama', 'vllm', 'lm-studio'])
