/** Provider resources: an upstream with its credentials, read from a Secret when the resource names one. */
import type { Provider } from '@gatehouse/crds'
import { assertOwnable, objectLabel, referencedWorkspaceId, ResourceError, workspaceIdFor, type ResourceHandler } from '../resource.ts'

const providerSlug = (provider: Provider): string => provider.spec.slug ?? provider.metadata.name

/**
 * A provider secret holds the API key, or a JSON object of named credentials (Bedrock's
 * accessKeyId/secretAccessKey, Azure Entra's tenantId/clientId/clientSecret), or a Google
 * service-account key, which is kept whole.
 */
export function credentialsFromSecret(value: string): Record<string, string> {
  const trimmed = value.trim()
  if (!trimmed.startsWith('{')) return { apiKey: trimmed }
  let parsed: unknown
  try {
    parsed = JSON.parse(trimmed)
  } catch {
    return { apiKey: trimmed }
  }
  if (typeof parsed !== 'object' || parsed === null) return { apiKey: trimmed }
  const record = parsed as Record<string, unknown>
  if (record.type === 'service_account') return { serviceAccountJson: trimmed }
  return Object.fromEntries(Object.entries(record).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
}

export const providerHandler: ResourceHandler<'Provider'> = {
  async apply(tx, context, declared, item) {
    const provider = item.resource
    const { spec } = provider
    let credentials: Record<string, string> = {}
    if (spec.secretRef) {
      const value = context.resolveSecret(spec.secretRef)
      if (value === null) {
        throw new ResourceError(item.source, objectLabel(provider), 'spec.secretRef', context.describeMissingSecret(spec.secretRef), 'SecretNotFound')
      }
      credentials = credentialsFromSecret(value)
    }
    const workspaceId = await workspaceIdFor(tx, context, declared.workspaces, spec.workspace, item)
    const slug = providerSlug(provider)
    assertOwnable(context, item, await tx.providers.getBySlug(context.organizationId, workspaceId, slug))
    const record = await tx.providers.upsert({
      organizationId: context.organizationId,
      workspaceId,
      slug,
      name: spec.name ?? provider.metadata.name,
      kind: spec.kind,
      baseUrl: spec.baseUrl ?? null,
      credentials,
      options: spec.options ?? {},
      tags: spec.tags ?? {},
      models: spec.models ?? [],
      managedBy: context.managedBy,
    })
    return record.id
  },
  async find(tx, context, item, workspaces, adminId) {
    const organizationId = context.organizationId
    if (adminId !== null) return tx.providers.get(organizationId, adminId)
    const workspaceId = await referencedWorkspaceId(tx, organizationId, workspaces, item.resource.spec.workspace)
    return workspaceId === undefined ? null : tx.providers.getBySlug(organizationId, workspaceId, providerSlug(item.resource))
  },
  delete: (tx, organizationId, id) => tx.providers.delete(organizationId, id),
  exists: async (store, organizationId, adminId) => (await store.providers.get(organizationId, adminId))?.id === adminId,
}
