/**
 * What the control plane hands to admitted sidecars besides their slice: the connection of the
 * shared limit and budget counters, taken from this process's own Redis settings (the names of
 * gateway/src/limits/from-env.ts, which the chart sets alike for the operator and the gateways).
 * It travels sealed on the sidecar stream, so no Redis address or password is written into an
 * application's pod spec; every pod a binding admits can use it, as every central gateway can.
 */
import { SIDECAR_COUNTER_SETTINGS, type SidecarSettings } from '@gatehouse/gateway/snapshot'

const ENDPOINTS = ['GATEHOUSE_REDIS_URL', 'GATEHOUSE_REDIS_SENTINELS', 'GATEHOUSE_REDIS_CLUSTER_NODES']

/** Null when this control plane has no Redis (sidecars then count in process, as a lone gateway does). */
export function sidecarSettingsFromEnv(env: NodeJS.ProcessEnv): SidecarSettings | null {
  if (!ENDPOINTS.some((name) => env[name])) return null
  const counters: SidecarSettings['counters'] = {}
  for (const name of SIDECAR_COUNTER_SETTINGS) {
    const value = env[name]
    if (value) counters[name] = value
  }
  return { counters }
}
