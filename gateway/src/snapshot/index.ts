/** The snapshot contract, the only gateway subpath the control plane imports. */
export * from './schema.ts'
export * from './validate.ts'
export * from './keys.ts'
export * from './envelope.ts'
export * from './sync-protocol.ts'
export * from './policies.ts'
export * from './enforcement.ts'
export * from '../providers/kinds.ts'
export * from './usage-record.ts'
/** The shipped pricing table is part of the contract: the control plane answers the public pricing lookup from it. */
export { modelPricingConfig, PRICING_PROVIDER_ALIASES, publicPricingAnswer, PRICING_TABLE_VERSION, PUBLIC_PRICING_PATH, tablePrice, type ModelPricingConfig, type Price } from '../pricing/index.ts'
