/**
 * The price overrides a snapshot carries: integration model pricing (the spec's Integrations >
 * Models `pricing_config`, US cents per token) for every provider drawing on that integration, then
 * the versioned overrides of the Model Pricing admin API (USD per unit), which win over them.
 */
import type { SnapshotPrice } from '@gatehouse/gateway/snapshot'
import type { IntegrationRecord, ModelPriceRecord } from '../store/index.ts'

const CENTS = 100

function centsPerToken(config: Record<string, unknown> | null | undefined, name: string): number | null {
  const payAsYouGo = (config?.pay_as_you_go ?? null) as Record<string, { price?: unknown } | undefined> | null
  const price = payAsYouGo?.[name]?.price
  return typeof price === 'number' && Number.isFinite(price) && price >= 0 ? price / CENTS : null
}

export function integrationPrices(integration: IntegrationRecord, providerIds: readonly string[]): SnapshotPrice[] {
  const out: SnapshotPrice[] = []
  for (const model of integration.models) {
    const config = model.pricing_config
    if (!config) continue
    const entry = {
      model: model.slug,
      workspaceId: null,
      input: centsPerToken(config, 'request_token'),
      output: centsPerToken(config, 'response_token'),
      cachedInput: centsPerToken(config, 'cache_read_input_token'),
      cacheWrite: centsPerToken(config, 'cache_write_input_token'),
      reasoning: centsPerToken(config, 'reasoning_token'),
      audioInput: centsPerToken(config, 'request_audio_token'),
      audioOutput: centsPerToken(config, 'response_audio_token'),
      cachedAudioInput: centsPerToken(config, 'cache_read_audio_input_token'),
      imageInput: null,
      perImage: null,
      perAudioSecond: null,
      perCharacter: null,
      version: `integration:${integration.slug}@${integration.updatedAt}`.slice(0, 64),
    }
    for (const provider of providerIds) out.push({ provider, ...entry })
  }
  return out
}

export function overridePrices(records: readonly ModelPriceRecord[]): SnapshotPrice[] {
  return records.map((record) => ({
    provider: record.provider,
    model: record.model,
    workspaceId: record.workspaceId,
    input: record.input,
    output: record.output,
    cachedInput: record.cachedInput,
    cacheWrite: record.cacheWrite,
    reasoning: record.reasoning,
    audioInput: record.audioInput,
    audioOutput: record.audioOutput,
    cachedAudioInput: record.cachedAudioInput,
    imageInput: record.imageInput,
    perImage: record.perImage,
    perAudioSecond: record.perAudioSecond,
    perCharacter: record.perCharacter,
    version: `override:${record.id.slice(0, 8)}:v${record.version}`,
  }))
}
