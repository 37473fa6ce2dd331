/**
 * Global setup of the vitest project `k8s` (vitest.config.ts): one etcd + kube-apiserver, with the
 * generated CRDs installed once, for every Kubernetes suite of the run. Each start-up costs seconds
 * of CPU (etcd, the API server's own bootstrap, CRD establishment); the suites used to pay it once
 * each. Vitest calls this only when a file of the project is queued, so the other suites never do.
 */
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { requireTools, startApiServer } from './apiserver.ts'
import { installCrds, repoRoot } from './kube.ts'

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Missing tools: the suites skip with this reason (in CI requireTools throws instead).
  if (!requireTools(['etcd', 'kube-apiserver', 'kubectl']).available) {
    project.provide('gatehouseApiServer', null)
    return undefined
  }
  const server = await startApiServer()
  try {
    await installCrds(server, path.join(repoRoot, 'crds/generated'))
  } catch (error) {
    await server.stop()
    throw error
  }
  project.provide('gatehouseApiServer', { url: server.url, kubeconfigPath: server.kubeconfigPath, token: server.token })
  return () => server.stop()
}
