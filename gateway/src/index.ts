/** The gateway package: build a server around a runtime holder fed with snapshots. */
export { buildGatewayServer, type GatewayServerOptions } from './server.ts'
export { RuntimeHolder, type ApplyResult } from './runtime/holder.ts'
export type { AdminForwarder, ForwardedRequest, ForwardedResponse } from './http/routes/admin-forward.ts'
export * from './snapshot/index.ts'
export { runGateway, type RunningGateway } from './main.ts'
export { drainAndClose, installReadinessGate, shutdownSettings, type ReadinessGate, type ShutdownSettings } from './http/shutdown.ts'
export { DEFAULT_METRICS_PORT, serveMetrics, type MetricsServer } from './telemetry/metrics-server.ts'
export { metricsPortSetting, type GatewayListenOptions } from './main.ts'
