import { describe, expect, it } from 'vitest'
import type { RuntimeConfig } from '../../runtime/compile.ts'
import type { SnapshotPrice } from '../../snapshot/policies.ts'
import { snapshotPricedCosts } from './limit-prices.ts'

const holderWith = (prices: SnapshotPrice[]): { current: RuntimeConfig } => ({ current: { prices } as unknown as RuntimeConfig })
const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 }

describe('cost budgets are priced like usage records', () => {
  it('prices a shipped model, and the snapshot override wins over the table', () => {
    const target = { providerId: 'p-1', providerKind: 'openai', model: 'gpt-4o', workspaceId: 'ws' }
    const shipped = snapshotPricedCosts(holderWith([])).costOf(target, usage)
    expect(shipped).toBeGreaterThan(0)
    const override: SnapshotPrice = { provider: 'openai', model: 'gpt-4o', workspaceId: null, input: 0.000001, output: 0.000002, cachedInput: null, cacheWrite: null, reasoning: null, audioInput: null, audioOutput: null, cachedAudioInput: null, imageInput: null, perImage: null, perAudioSecond: null, perCharacter: null, version: 'test' }
    expect(snapshotPricedCosts(holderWith([override])).costOf(target, usage)).toBeCloseTo(3, 6)
  })

  it('has no price for a model nobody priced, so the stage can say the budget is unpriced', () => {
    expect(snapshotPricedCosts(holderWith([])).costOf({ providerId: null, providerKind: 'openai', model: 'no-such-model-xyz', workspaceId: null }, usage)).toBeNull()
    expect(snapshotPricedCosts(holderWith([])).costOf({ providerId: null, providerKind: null, model: 'gpt-4o', workspaceId: null }, usage)).toBeNull()
  })
})
