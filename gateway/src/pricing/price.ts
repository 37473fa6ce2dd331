/**
 * Prices and costs. `priceFor` answers what one model costs for one workspace: a snapshot override
 * (the most specific one: provider id before provider kind, workspace before organisation) on top
 * of the shipped table; `costOf` turns a usage into USD. Both are pure and cheap: the override
 * index is built once per snapshot (keyed on the snapshot's `prices` array) and a lookup is a few
 * map reads, because the account stage and the budget reservation call them on every request.
 */
import type { ImageVariant, Usage } from '../providers/canonical.ts'
import { FREE_KINDS, PRICING_TABLES, PRICING_TABLE_VERSION, type AudioRow, type ImagePrices, type ImageTokenRow, type LongPromptBand, type PriceRow, type TokenRow, type UnitRow } from './table.ts'

/** USD per unit: per token for text, audio and image tokens, per image, per second of audio, per character of input, per search unit, per page. */
export interface Price {
  readonly input: number
  readonly output: number
  /** Null: cached input bills as input. */
  readonly cachedInput: number | null
  /** Null: cache writes bill as input. */
  readonly cacheWrite: number | null
  /** Null: reasoning tokens bill as output. */
  readonly reasoning: number | null
  /** Per audio token. Null: audio input tokens bill as input. */
  readonly audioInput: number | null
  /** Per audio token. Null: audio output tokens bill as output. */
  readonly audioOutput: number | null
  /** Per cached audio token. Null: as audio input (as cached input where there is no audio price). */
  readonly cachedAudioInput: number | null
  /** Per image input token (GPT Image models). Null: image tokens bill as input. */
  readonly imageInput: number | null
  /** Per image of a quality and size `perImageBy` does not list. */
  readonly perImage: number | null
  /** Per image by quality, then size (DALL·E); null: `perImage` for every image. */
  readonly perImageBy: ImagePrices | null
  readonly perAudioSecond: number | null
  /** Per character of input (speech models such as tts-1). */
  readonly perCharacter: number | null
  readonly perSearchUnit: number | null
  readonly perPage: number | null
  /** The table row's dearer band for long prompts; an override's rates are scaled by it too. */
  readonly longPrompt: LongPromptBand | null
  /** The table version, or the override's version. */
  readonly version: string
  readonly source: 'table' | 'override'
}

/**
 * A price override as the snapshot carries it (`snapshot.prices`, USD per unit; null fields keep
 * the table's value). Declared here, not imported, because pricing sits below the snapshot.
 */
export interface PriceOverride {
  readonly provider: string
  readonly model: string
  readonly workspaceId: string | null
  readonly input: number | null
  readonly output: number | null
  readonly cachedInput: number | null
  readonly cacheWrite: number | null
  readonly reasoning: number | null
  readonly audioInput: number | null
  readonly audioOutput: number | null
  readonly cachedAudioInput: number | null
  readonly imageInput: number | null
  /** One price for every image of the model: it replaces the table's prices by quality and size. */
  readonly perImage: number | null
  readonly perAudioSecond: number | null
  readonly perCharacter: number | null
  readonly version: string
}

const PER_MILLION = 1_000_000

const perToken = (perMillion: number | null | undefined): number | null => (perMillion == null ? null : perMillion / PER_MILLION)

function fromTokens(row: TokenRow): Price {
  const [input, output, cachedInput, cacheWrite, longPrompt] = row
  return { ...ZERO, input: input / PER_MILLION, output: output / PER_MILLION, cachedInput: perToken(cachedInput), cacheWrite: perToken(cacheWrite), longPrompt: longPrompt ?? null }
}

function fromRow(row: PriceRow): Price {
  if (Array.isArray(row)) return fromTokens(row as TokenRow)
  if ('imageInput' in row) {
    const { text, imageInput } = row as ImageTokenRow
    return { ...fromTokens(text), imageInput: perToken(imageInput) }
  }
  if ('audio' in row) {
    const { text, audio } = row as AudioRow
    return { ...fromTokens(text), audioInput: perToken(audio[0]), audioOutput: perToken(audio[1]), cachedAudioInput: perToken(audio[2]) }
  }
  const units = row as UnitRow
  return {
    ...ZERO,
    perImage: units.perImage ?? null,
    perImageBy: units.perImageBy ?? null,
    perAudioSecond: units.perAudioSecond ?? null,
    perCharacter: units.perCharacter ?? null,
    perSearchUnit: units.perSearchUnit ?? null,
    perPage: units.perPage ?? null,
  }
}

const ZERO: Price = {
  input: 0, output: 0, cachedInput: null, cacheWrite: null, reasoning: null, audioInput: null, audioOutput: null, cachedAudioInput: null,
  imageInput: null, perImage: null, perImageBy: null, perAudioSecond: null, perCharacter: null, perSearchUnit: null, perPage: null,
  longPrompt: null, version: PRICING_TABLE_VERSION, source: 'table',
}

/** Converted once at load: kind -> model -> price. */
const tables: ReadonlyMap<string, ReadonlyArray<ReadonlyMap<string, Price>>> = new Map(
  Object.entries(PRICING_TABLES).map(([kind, list]) => [kind, list.map((table) => new Map(Object.entries(table).map(([model, row]) => [model, fromRow(row)])))]),
)

/** Bedrock ids carry a region prefix (`us.`) and a vendor prefix (`anthropic.`): the table keys have neither. */
function bedrockName(model: string): string {
  const parts = model.split('.')
  if (parts.length >= 3 && /^[a-z]{2,6}$/.test(parts[0]!) && !parts[0]!.includes('-')) parts.shift()
  return parts.length >= 2 ? parts.slice(1).join('.') : model
}

/**
 * A release tag at the end of a model id: what a provider appends for a snapshot of the same model
 * at the same price. A date (`-20241022`, `-2024-07-18`, `-08-2024`, `-06-17`), a snapshot number
 * (`-001`, `-0125`), a version (`-v1`, `@20240620`, `:0`) or a channel (`-latest`, `-preview`,
 * `-exp`, `-beta`). A model's own version or size is not one: `claude-opus-4-8` is not a snapshot
 * of `claude-opus-4` (a third of its price), nor `gpt-5.5-mini` of `gpt-5.5`.
 */
const RELEASE_TAG = /(?:[@:][^@:]*|-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{2}-\d{4}|\d{2}-\d{2}|\d{3,4}|v\d+(?:\.\d+)?|latest|preview|exp|experimental|beta))$/

/**
 * The model id, then the id without its release tags one by one (dated and versioned ids find
 * their model's row). Nothing else is cut: a model the table does not know stays unpriced, which
 * `gatehouse_unpriced_requests_total` shows, instead of taking an older or smaller model's price.
 */
function* candidates(model: string): Generator<string> {
  let name = model.toLowerCase()
  for (;;) {
    yield name
    const tag = RELEASE_TAG.exec(name)
    if (tag === null || tag.index === 0) return
    name = name.slice(0, tag.index)
  }
}

interface TableEntry {
  readonly price: Price
  /** The row's model id: the model's family. */
  readonly family: string
}

/** The table row a model of a provider kind is priced by, and that row's model id (its family). */
function tableEntry(providerKind: string, model: string): TableEntry | null {
  const list = tables.get(providerKind)
  if (!list) return null
  const name = providerKind === 'bedrock' ? bedrockName(model) : model
  for (const candidate of candidates(name)) {
    for (const table of list) {
      const price = table.get(candidate)
      if (price) return { price, family: candidate }
    }
  }
  return null
}

/**
 * Table rows found, by provider kind then model: every request looks its model up (the metrics'
 * model family; a metered request's price too), so by two map reads of strings whose hashes V8
 * keeps, not by a key string built, flattened and hashed per call (1.6 % of the metered path's CPU
 * profile, test/bench/features-cpu.ts), nor a walk of the candidate names. Bounded per kind.
 */
const entryCache = new Map<string, Map<string, TableEntry | null>>()
const ENTRY_CACHE_MAX = 10_000

function cachedTableEntry(providerKind: string, model: string): TableEntry | null {
  let models = entryCache.get(providerKind)
  if (models === undefined) {
    models = new Map()
    entryCache.set(providerKind, models)
  }
  let entry = models.get(model)
  if (entry === undefined) {
    entry = tableEntry(providerKind, model)
    if (models.size >= ENTRY_CACHE_MAX) models.clear()
    models.set(model, entry)
  }
  return entry
}

/**
 * The model family the shipped table prices a model as (`gpt-4o-2024-08-06` -> `gpt-4o`), or null
 * when the table has no row for it (self-hosted kinds have none). A bounded name for metrics.
 */
export function tableModelFamily(providerKind: string, model: string): string | null {
  return cachedTableEntry(providerKind, model)?.family ?? null
}

/** The shipped table's price for a model of a provider kind, or null when the table has none. */
export function tablePrice(providerKind: string, model: string): Price | null {
  return FREE_KINDS.has(providerKind) ? ZERO : (cachedTableEntry(providerKind, model)?.price ?? null)
}

type OverrideIndex = ReadonlyMap<string, PriceOverride>
const overrideIndexes = new WeakMap<readonly PriceOverride[], OverrideIndex>()

function overrideKey(provider: string, model: string, workspaceId: string | null): string {
  return `${provider}\u0000${workspaceId ?? ''}\u0000${model.toLowerCase()}`
}

function indexOf(overrides: readonly PriceOverride[]): OverrideIndex {
  let index = overrideIndexes.get(overrides)
  if (!index) {
    const built = new Map<string, PriceOverride>()
    for (const entry of overrides) built.set(overrideKey(entry.provider, entry.model, entry.workspaceId), entry)
    overrideIndexes.set(overrides, built)
    index = built
  }
  return index
}

function applyOverride(base: Price | null, override: PriceOverride): Price {
  const from = base ?? ZERO
  return {
    input: override.input ?? from.input,
    output: override.output ?? from.output,
    cachedInput: override.cachedInput ?? from.cachedInput,
    cacheWrite: override.cacheWrite ?? from.cacheWrite,
    reasoning: override.reasoning ?? from.reasoning,
    audioInput: override.audioInput ?? from.audioInput,
    audioOutput: override.audioOutput ?? from.audioOutput,
    cachedAudioInput: override.cachedAudioInput ?? from.cachedAudioInput,
    imageInput: override.imageInput ?? from.imageInput,
    perImage: override.perImage ?? from.perImage,
    perImageBy: override.perImage === null ? from.perImageBy : null,
    perAudioSecond: override.perAudioSecond ?? from.perAudioSecond,
    perCharacter: override.perCharacter ?? from.perCharacter,
    perSearchUnit: from.perSearchUnit,
    perPage: from.perPage,
    longPrompt: from.longPrompt,
    version: override.version,
    source: 'override',
  }
}

/**
 * The price of `model` at a provider for a workspace: the most specific override (provider id and
 * workspace, provider id, provider kind and workspace, provider kind), each field it leaves null
 * taken from the shipped table; else the table; else null (unpriced: cost unknown).
 */
export function priceFor(
  providerKind: string,
  providerId: string | null,
  model: string,
  workspaceId: string | null,
  overrides: readonly PriceOverride[],
): Price | null {
  const table = tablePrice(providerKind, model)
  if (overrides.length === 0) return table
  const index = indexOf(overrides)
  const override =
    (providerId !== null && workspaceId !== null ? index.get(overrideKey(providerId, model, workspaceId)) : undefined) ??
    (providerId !== null ? index.get(overrideKey(providerId, model, null)) : undefined) ??
    (workspaceId !== null ? index.get(overrideKey(providerKind, model, workspaceId)) : undefined) ??
    index.get(overrideKey(providerKind, model, null))
  return override ? applyOverride(table, override) : table
}

/**
 * USD for a usage at a price (fractional, unrounded). Canonical usage counts cached input and
 * cache writes inside `inputTokens`, reasoning inside `outputTokens`, and audio tokens inside both
 * (cached audio inside `cachedInputTokens` too); each part bills at its own rate where the price
 * has one: text + audio + cached parts; image tokens among the input likewise. Seconds of audio,
 * characters of input and images (models billed by them) add at their unit prices, an image at the
 * price of its quality and size where the price lists one.
 */
export function costOf(usage: Usage, price: Price): number {
  const cached = usage.cachedInputTokens ?? 0
  const written = usage.cacheWriteInputTokens ?? 0
  const reasoning = usage.reasoningTokens ?? 0
  const audioInput = Math.min(usage.audioInputTokens ?? 0, usage.inputTokens)
  const cachedAudio = Math.min(usage.cachedAudioInputTokens ?? 0, audioInput, cached)
  const freshAudio = audioInput - cachedAudio
  const audioOutput = Math.min(usage.audioOutputTokens ?? 0, usage.outputTokens)
  const imageInput = Math.min(usage.imageInputTokens ?? 0, usage.inputTokens)
  const plainInput = Math.max(0, usage.inputTokens - cached - written - freshAudio - imageInput)
  const plainOutput = Math.max(0, usage.outputTokens - reasoning - audioOutput)
  // Cached audio without a price of its own: a model with audio prices bills it as audio, one without as cached text.
  const cachedAudioRate = price.cachedAudioInput ?? price.audioInput ?? price.cachedInput ?? price.input
  const inputSide =
    plainInput * price.input +
    (cached - cachedAudio) * (price.cachedInput ?? price.input) +
    written * (price.cacheWrite ?? price.input) +
    freshAudio * (price.audioInput ?? price.input) +
    imageInput * (price.imageInput ?? price.input) +
    cachedAudio * cachedAudioRate
  const outputSide = plainOutput * price.output + reasoning * (price.reasoning ?? price.output) + audioOutput * (price.audioOutput ?? price.output)
  // A long prompt bills the whole request in the dearer band, its output included.
  const band = price.longPrompt !== null && usage.inputTokens > price.longPrompt.aboveInputTokens ? price.longPrompt : null
  let cost = band === null ? inputSide + outputSide : inputSide * band.inputFactor + outputSide * band.outputFactor
  if (usage.searchUnits) cost += usage.searchUnits * (price.perSearchUnit ?? 0)
  if (usage.pages) cost += usage.pages * (price.perPage ?? 0)
  if (usage.audioSeconds) cost += usage.audioSeconds * (price.perAudioSecond ?? 0)
  if (usage.inputCharacters) cost += usage.inputCharacters * (price.perCharacter ?? 0)
  if (usage.images) cost += usage.images * imagePrice(price, usage.imageVariant)
  return cost
}

/** USD for one image of a variant: the price's own for that quality and size, else its flat per-image price. */
export function imagePrice(price: Price, variant: ImageVariant | undefined): number {
  const listed = variant === undefined ? undefined : price.perImageBy?.[variant.quality]?.[variant.size]
  return listed ?? price.perImage ?? 0
}
