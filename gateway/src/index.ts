/** The gateway package: build a server around a runtime holder fed with snapshots. */
export { buildGatewayServer, type GatewayServerOptions } from './server.ts'
export { RuntimeHolder, type ApplyResult } from './runtime/holder.ts'
export type { AdminForwarder, ForwardedRequest, ForwardedResponse } from './http/routes/admin-forward.ts'
export * from './snapshot/index.ts'
export { runGateway, type RunningGateway } from './main.ts'
export { startUsageShipping, UsageShipper, type UsageSink, type UsageTransport } from './usage/index.ts'
export { accountStage } from './pipeline/stages/account.ts'
