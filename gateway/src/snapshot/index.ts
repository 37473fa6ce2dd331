/** The snapshot contract, the only gateway subpath the control plane imports. */
export * from './schema.ts'
export * from './validate.ts'
export * from './keys.ts'
export * from './envelope.ts'
export * from './sync-protocol.ts'
export * from './policies.ts'
export * from './enforcement.ts'
export * from './usage-record.ts'
