/**
 * The webhook's boot settings, from the environment (the chart sets them):
 *   GATEHOUSE_WEBHOOK_PORT                serve the admission webhook on this port (unset: no webhook)
 *   GATEHOUSE_WEBHOOK_HOST                default 0.0.0.0
 *   GATEHOUSE_WEBHOOK_CERT_DIR            tls.crt/tls.key from here (cert-manager); unset: self-managed
 *   GATEHOUSE_WEBHOOK_SECRET              self-managed: the Secret holding CA and certificate (gatehouse-webhook-tls)
 *   GATEHOUSE_WEBHOOK_CONFIGURATION       self-managed: the MutatingWebhookConfiguration to keep caBundle on
 *   GATEHOUSE_WEBHOOK_SERVICE             the webhook Service's name (certificate DNS names; gatehouse-webhook)
 *   GATEHOUSE_WEBHOOK_EXTRA_NAMES         more DNS names or IPs for the certificate, comma-separated
 *   GATEHOUSE_SIDECAR_IMAGE               image of the injected sidecar (required with the webhook)
 *   GATEHOUSE_SIDECAR_CONTROL_PLANE_URL   the control plane as pods reach it (required with the webhook)
 *   GATEHOUSE_SIDECAR_PORT, GATEHOUSE_SIDECAR_HEALTH_PORT, GATEHOUSE_SIDECAR_LOG_LEVEL,
 *   GATEHOUSE_SIDECAR_CPU, GATEHOUSE_SIDECAR_MEMORY, GATEHOUSE_SIDECAR_MEMORY_LIMIT   defaults per pod
 *   GATEHOUSE_SIDECAR_<NAME>              for each NAME of SIDECAR_TELEMETRY_SETTINGS (OTEL_EXPORTER_OTLP_ENDPOINT,
 *                                         OTEL_TRACES_SAMPLER, GATEHOUSE_ACCESS_LOG, ...): written as NAME into every sidecar
 */
import { SIDECAR_TELEMETRY_SETTINGS, type EnvVar, type SidecarSettings } from './inject.ts'

/** The sidecars' tracing and access-log variables, from the operator's GATEHOUSE_SIDECAR_<NAME>. */
export function sidecarTelemetryEnv(env: NodeJS.ProcessEnv): EnvVar[] {
  return SIDECAR_TELEMETRY_SETTINGS.flatMap((name) => {
    const value = env[`GATEHOUSE_SIDECAR_${name}`]
    return value ? [{ name, value }] : []
  })
}

export interface WebhookSettings {
  host: string
  port: number
  certDir: string | null
  secretName: string
  configurationName: string
  names: string[]
  sidecar: SidecarSettings
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]
  if (!value) throw new Error(`${name} must be set when GATEHOUSE_WEBHOOK_PORT is`)
  return value
}

function portOf(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number`)
  return value
}

/** null when the webhook is off. */
export function webhookSettings(env: NodeJS.ProcessEnv, namespace: string): WebhookSettings | null {
  if (!env.GATEHOUSE_WEBHOOK_PORT) return null
  const service = env.GATEHOUSE_WEBHOOK_SERVICE || 'gatehouse-webhook'
  const extra = (env.GATEHOUSE_WEBHOOK_EXTRA_NAMES ?? '').split(',').map((name) => name.trim()).filter(Boolean)
  return {
    host: env.GATEHOUSE_WEBHOOK_HOST || '0.0.0.0',
    port: portOf(env, 'GATEHOUSE_WEBHOOK_PORT', 9443),
    certDir: env.GATEHOUSE_WEBHOOK_CERT_DIR || null,
    secretName: env.GATEHOUSE_WEBHOOK_SECRET || 'gatehouse-webhook-tls',
    configurationName: env.GATEHOUSE_WEBHOOK_CONFIGURATION || 'gatehouse-sidecar-injector',
    names: [`${service}.${namespace}.svc`, service, `${service}.${namespace}`, `${service}.${namespace}.svc.cluster.local`, ...extra],
    sidecar: {
      image: required(env, 'GATEHOUSE_SIDECAR_IMAGE'),
      ...(env.GATEHOUSE_SIDECAR_IMAGE_PULL_POLICY ? { imagePullPolicy: env.GATEHOUSE_SIDECAR_IMAGE_PULL_POLICY } : {}),
      controlPlaneUrl: required(env, 'GATEHOUSE_SIDECAR_CONTROL_PLANE_URL'),
      defaultPort: portOf(env, 'GATEHOUSE_SIDECAR_PORT', 8787),
      healthPort: portOf(env, 'GATEHOUSE_SIDECAR_HEALTH_PORT', 15787),
      defaultLogLevel: env.GATEHOUSE_SIDECAR_LOG_LEVEL || 'info',
      resources: {
        cpu: env.GATEHOUSE_SIDECAR_CPU || '50m',
        memory: env.GATEHOUSE_SIDECAR_MEMORY || '64Mi',
        memoryLimit: env.GATEHOUSE_SIDECAR_MEMORY_LIMIT || '160Mi',
      },
      telemetryEnv: sidecarTelemetryEnv(env),
    },
  }
}
