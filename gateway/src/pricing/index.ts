/**
 * Pricing: the shipped table, snapshot overrides, and cost in USD. The stable surface other
 * stages import (the account stage records cost; budgets reserve the worst case with it).
 */
export { costOf, imagePrice, priceFor, tableModelFamily, tablePrice, type Price, type PriceOverride } from './price.ts'
export { PRICING_TABLE_VERSION } from './table.ts'
export { modelPricingConfig, PRICING_PROVIDER_ALIASES, publicPricingAnswer, PUBLIC_PRICING_PATH, type ModelPricingConfig } from './public.ts'
