/**
 * Prices for cost budgets: the same table and overrides the usage records are priced with (the
 * shipped table under the current snapshot's `prices`), so what a budget reserves and settles is
 * what the records say was spent.
 */
import { costOf, priceFor } from '../../pricing/index.ts'
import type { RuntimeHolder } from '../../runtime/holder.ts'
import type { CostEstimator } from './limits.ts'

export function snapshotPricedCosts(holder: Pick<RuntimeHolder, 'current'>): CostEstimator {
  return {
    costOf(target, usage) {
      if (target.providerKind === null || target.model === null) return null
      const price = priceFor(target.providerKind, target.providerId, target.model, target.workspaceId, holder.current?.prices ?? [])
      return price === null ? null : costOf(usage, price)
    },
  }
}
