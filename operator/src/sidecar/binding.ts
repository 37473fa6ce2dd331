/**
 * The sidecar binding of a Gatehouse Deployment object (`spec.sidecar`): which service accounts
 * and namespaces may run its sidecar, and the workspace they act as. Read from the API server when
 * a sidecar connects and when the webhook admits a pod, so a changed binding applies at once.
 */
import { GROUP, VERSION, type DeploymentSpec, type SidecarBinding } from '@gatehouse/crds'
import { isStatus, objectPath, type KubeRest, type ResourceType } from '../kube/client.ts'

export const GATEHOUSE_DEPLOYMENTS: ResourceType = { group: GROUP, version: VERSION, plural: 'deployments', kind: 'Deployment' }
export const GATEHOUSE_WORKSPACES: ResourceType = { group: GROUP, version: VERSION, plural: 'workspaces', kind: 'Workspace' }

export interface ResolvedBinding {
  /** The deployment's slug in the admin store (its per-deployment snapshot). */
  deploymentSlug: string
  /** The bound workspace's slug. */
  workspaceSlug: string
  binding: SidecarBinding | null
}

export function bindingAdmits(binding: SidecarBinding, namespace: string, serviceAccount: string): boolean {
  if ((binding.namespaces ?? []).includes(namespace)) return true
  return (binding.serviceAccounts ?? []).some((account) => account.namespace === namespace && account.name === serviceAccount)
}

/** `namespace/name`, or a bare name in `defaultNamespace`; null when malformed. */
export function parseDeploymentRef(reference: string, defaultNamespace: string): { namespace: string; name: string } | null {
  const parts = reference.split('/')
  const [namespace, name] = parts.length === 2 ? parts : [defaultNamespace, parts[0]]
  const dns = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/
  if (parts.length > 2 || !namespace || !name || !dns.test(namespace) || !dns.test(name)) return null
  return { namespace, name }
}

async function getObject(kube: KubeRest, type: ResourceType, namespace: string, name: string): Promise<{ metadata: { name: string }; spec?: Record<string, unknown> } | null> {
  try {
    return await kube.call('GET', objectPath(type, namespace, name))
  } catch (error) {
    if (isStatus(error, 404)) return null
    throw error
  }
}

/** The Deployment object and its bound workspace; null when the Deployment does not exist. */
export async function resolveBinding(kube: KubeRest, namespace: string, name: string): Promise<ResolvedBinding | null> {
  const deployment = await getObject(kube, GATEHOUSE_DEPLOYMENTS, namespace, name)
  if (!deployment) return null
  const spec = (deployment.spec ?? {}) as Partial<DeploymentSpec>
  const binding = spec.sidecar ?? null
  let workspaceSlug = binding?.workspace ?? ''
  if (binding) {
    const workspace = await getObject(kube, GATEHOUSE_WORKSPACES, namespace, binding.workspace)
    const slug = workspace?.spec?.slug
    if (typeof slug === 'string') workspaceSlug = slug
  }
  return { deploymentSlug: spec.slug ?? deployment.metadata.name, workspaceSlug, binding }
}
