/**
 * The price of what an exchange's provider served: the account stage prices the record with it,
 * and the cache stage prices an answer it stores (so a later hit can say what it saved). The
 * model the provider said it served, else the model name sent to it.
 */
import { costOf, priceFor, type Price } from '../../pricing/index.ts'
import type { Usage } from '../../providers/canonical.ts'
import type { Exchange } from '../stage.ts'

export function exchangePrice(exchange: Exchange, model: string | null): Price | null {
  const { facts, context } = exchange
  const provider = facts.provider
  if (!provider || model === null) return null
  const { kind, id } = provider.record
  const prices = context.runtime.prices
  return (
    priceFor(kind, id, model, context.workspaceId, prices) ??
    (facts.upstreamModel !== null && facts.upstreamModel !== model ? priceFor(kind, id, facts.upstreamModel, context.workspaceId, prices) : null)
  )
}

/** USD the provider's answer cost, or null when the model has no price or there is no usage. */
export function exchangeCost(exchange: Exchange, usage: Usage | null): number | null {
  if (usage === null) return null
  const { facts } = exchange
  const price = exchangePrice(exchange, facts.servedModel ?? facts.upstreamModel)
  return price === null ? null : costOf(usage, price)
}
