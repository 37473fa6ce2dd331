/** Starts the admission webhook in the operator process when its settings say so. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { KubeRest } from '../kube/client.ts'
import { resolveBinding } from '../sidecar/binding.ts'
import { fileCertificates, selfManagedCertificates } from './cert-rotation.ts'
import { serveWebhook, type WebhookLogger, type WebhookServer } from './server.ts'
import type { WebhookSettings } from './settings.ts'

/** `sidecarRoutes`: the control plane's app, which the listener hands the sidecars' TLS requests to. */
export async function startWebhook(kube: KubeRest, namespace: string, settings: WebhookSettings, logger: WebhookLogger, sidecarRoutes?: (request: IncomingMessage, response: ServerResponse) => void): Promise<WebhookServer> {
  const onError = (error: unknown): void => logger.warn({ err: error }, 'the webhook certificate check failed; serving the current one')
  const certificates = settings.certDir
    ? fileCertificates(settings.certDir, { onError })
    : selfManagedCertificates({ kube, namespace, secretName: settings.secretName, webhookConfigName: settings.configurationName, names: settings.names, onError })
  return await serveWebhook({
    host: settings.host,
    port: settings.port,
    certificates,
    logger,
    ...(sidecarRoutes ? { sidecarRoutes } : {}),
    deps: {
      settings: settings.sidecar,
      // An https control-plane URL is verified with this CA (webhook/inject.ts writes it into the sidecar).
      controlPlaneCa: () => certificates.caBundle(),
      excludedNamespaces: new Set([namespace]),
      resolveBinding: (ns, name) => resolveBinding(kube, ns, name),
      namespaceAnnotations: async (ns) => {
        const object = await kube.call<{ metadata?: { annotations?: Record<string, string> } }>('GET', `/api/v1/namespaces/${encodeURIComponent(ns)}`)
        return object.metadata?.annotations ?? {}
      },
    },
  })
}
