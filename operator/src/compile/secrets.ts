/**
 * Reading the values behind secret references when a snapshot is compiled. The control plane's
 * environment serves `environment` references; `kubernetes` references need a reader for Secrets
 * (the operator passes one in cluster mode). A value that cannot be read leaves the provider
 * without that credential and disabled, and is reported: the snapshot still compiles, and no
 * request is sent upstream with a missing credential.
 */
import { SECRETS, type KubeClient } from '../kube/client.ts'
import type { SecretMapping, SecretReferenceRecord } from '../store/index.ts'
import { gatewayFieldName, isSecretField } from './credential-fields.ts'
import { readVaultSecret, type VaultSettings } from './vault.ts'

export interface SecretLocation {
  managerType: SecretReferenceRecord['managerType']
  path: string
  key: string | null
}

/** Returns the secret's value, or null when it does not exist. */
export type SecretReader = (location: SecretLocation) => Promise<string | null>

/** Environment references only; anything else is unreadable (null). */
export function environmentSecretReader(env: NodeJS.ProcessEnv = process.env): SecretReader {
  return async (location) => (location.managerType === 'environment' ? env[location.path] ?? null : null)
}

/** A Kubernetes Secret key: `namespace` null means the control plane's own namespace. */
export interface KubernetesSecretKey {
  namespace: string | null
  name: string
  key: string
}

export type KubernetesSecretSource = (reference: KubernetesSecretKey) => Promise<string | null> | string | null

/**
 * Environment references from `env`; Kubernetes references from `kubernetes` (the resource
 * files' v1/Secret objects in embedded mode, the cluster's Secrets in cluster mode).
 */
export function secretReader(options: { env?: NodeJS.ProcessEnv; kubernetes?: KubernetesSecretSource; vault?: VaultSettings | null }): SecretReader {
  const fromEnv = environmentSecretReader(options.env)
  return async (location) => {
    if (location.managerType === 'environment') return fromEnv(location)
    if (location.managerType === 'hashicorp_vault') {
      if (!options.vault || !location.key) return null
      // An unreadable secret disables what uses it (reported by resolveSecretMappings); the
      // snapshot still compiles.
      return readVaultSecret(options.vault, location.path, location.key).catch(() => null)
    }
    if (!options.kubernetes || !location.key) return null
    const slash = location.path.indexOf('/')
    const reference = slash === -1
      ? { namespace: null, name: location.path, key: location.key }
      : { namespace: location.path.slice(0, slash), name: location.path.slice(slash + 1), key: location.key }
    return options.kubernetes(reference)
  }
}

/** Reads Secrets through the operator's Kubernetes port (`data` is base64, `stringData` plain). */
export function kubeSecretSource(
  client: Pick<KubeClient, 'get'>,
  defaultNamespace: string,
): KubernetesSecretSource {
  return async (reference) => {
    const secret = await client.get(SECRETS, reference.namespace ?? defaultNamespace, reference.name)
    const fields = secret as { data?: unknown; stringData?: unknown } | null
    const data = (fields?.data ?? {}) as Record<string, unknown>
    const stringData = (fields?.stringData ?? {}) as Record<string, unknown>
    if (typeof stringData[reference.key] === 'string') return stringData[reference.key] as string
    const encoded = data[reference.key]
    return typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString('utf8') : null
  }
}

export interface ResolvedFields {
  credentials: Record<string, string>
  options: Record<string, string>
  /** Human-readable problems (no secret values), e.g. "key: environment variable OPENAI_KEY is not set". */
  problems: string[]
}

function describe(location: SecretLocation): string {
  if (location.managerType === 'environment') return `environment variable ${location.path} is not set`
  if (location.managerType === 'hashicorp_vault') return `Vault secret ${location.path} key ${location.key ?? '(none)'} could not be read (missing, refused, or no Vault configured)`
  return `Kubernetes Secret ${location.path}${location.key ? ` key ${location.key}` : ''} could not be read`
}

/** Picks `field` out of a JSON secret value; null when absent. */
function jsonField(value: string, field: string): string | null {
  try {
    const parsed = JSON.parse(value) as unknown
    if (typeof parsed !== 'object' || parsed === null) return null
    const picked = (parsed as Record<string, unknown>)[field]
    if (picked === undefined || picked === null) return null
    return typeof picked === 'string' ? picked : JSON.stringify(picked)
  } catch {
    return null
  }
}

/**
 * Resolves `mappings` for an object that lives in `workspaceId` (null = organisation-wide).
 * A reference not shared with that workspace counts as unreadable.
 */
export async function resolveSecretMappings(
  mappings: readonly SecretMapping[],
  references: ReadonlyMap<string, SecretReferenceRecord>,
  workspaceId: string | null,
  read: SecretReader,
): Promise<ResolvedFields> {
  const out: ResolvedFields = { credentials: {}, options: {}, problems: [] }
  for (const mapping of mappings) {
    const reference = references.get(mapping.secret_reference_id)
    if (!reference || reference.status !== 'active') {
      out.problems.push(`${mapping.target_field}: secret reference ${mapping.secret_reference_id} does not exist`)
      continue
    }
    if (workspaceId !== null && !reference.allowAllWorkspaces && !reference.allowedWorkspaceIds.includes(workspaceId)) {
      out.problems.push(`${mapping.target_field}: secret reference ${reference.slug} is not shared with this workspace`)
      continue
    }
    // Kubernetes and Vault: the mapping's secret_key names the secret's key (default: the reference's).
    // Environment: a secret_key picks a field of a JSON value.
    const kubernetes = reference.managerType === 'kubernetes' || reference.managerType === 'hashicorp_vault'
    const location: SecretLocation = {
      managerType: reference.managerType,
      path: reference.secretPath,
      key: kubernetes ? mapping.secret_key ?? reference.secretKey : null,
    }
    let value = await read(location)
    const field = kubernetes ? null : mapping.secret_key ?? reference.secretKey
    if (value !== null && (field || mapping.value_format === 'json')) value = field ? jsonField(value, field) : value
    if (value === null) {
      out.problems.push(`${mapping.target_field}: ${describe(location)}${field ? ` (or has no field ${field})` : ''}`)
      continue
    }
    const target = isSecretField(mapping.target_field) ? out.credentials : out.options
    target[gatewayFieldName(mapping.target_field)] = value
  }
  return out
}
