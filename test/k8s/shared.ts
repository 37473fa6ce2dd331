/**
 * The suites' side of the shared API server: what the k8s project's global setup
 * (shared-apiserver.ts) provides, read back in a test worker.
 */
import { inject } from 'vitest'
import { KubeConfig } from '@kubernetes/client-node'
import type { ApiServerConnection } from './apiserver.ts'

/** What the k8s project's global setup (shared-apiserver.ts) hands to every suite it runs. */
export interface SharedApiServerInfo {
  url: string
  kubeconfigPath: string
  token: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** null when the tools are missing (the suites skip, as requireTools says why). */
    gatehouseApiServer: SharedApiServerInfo | null
  }
}

/**
 * The one API server every suite of the `k8s` vitest project shares (started by its global setup,
 * CRDs from crds/generated already installed and Established). Suites keep to their own namespaces
 * and names, and remove cluster-scoped objects they create that could act on others (webhooks).
 * The global setup's teardown stops it after the last suite.
 */
export function sharedApiServer(): ApiServerConnection {
  const info = inject('gatehouseApiServer')
  if (!info) throw new Error('no shared kube-apiserver: run this suite in the vitest project `k8s` (vitest.config.ts), with the tools built')
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(info.kubeconfigPath)
  return { ...info, kubeConfig }
}
