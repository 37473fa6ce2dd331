/**
 * HashiCorp Vault KV version 2 as a secret manager for secret references (`manager_type:
 * hashicorp_vault`, `secret_path` = `<mount>/<path>`, `secret_key` = the key inside the secret).
 * Vault's address and token belong to the operator (GATEHOUSE_VAULT_ADDR, GATEHOUSE_VAULT_TOKEN,
 * optional GATEHOUSE_VAULT_NAMESPACE): a tenant names only where in Vault to read, never which
 * server, so no tenant-chosen address is ever fetched. Token auth; reads are
 * `GET <addr>/v1/<mount>/data/<path>` answering `{"data": {"data": {...}, "metadata": {...}}}`.
 */

export interface VaultSettings {
  /** Base address, e.g. https://vault.vault.svc:8200. */
  address: URL
  token: string
  namespace: string | null
  /** Per read; Vault answers KV reads in milliseconds. */
  timeoutMs: number
}

export const VAULT_TIMEOUT_MS = 5000

/** `<mount>/<path...>`: segments of letters, digits, `_`, `-` and `.`, none of them `.` or `..`. */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/

export function parseVaultPath(secretPath: string): { mount: string; path: string } | null {
  const segments = secretPath.split('/')
  if (segments.length < 2 || !segments.every((segment) => SEGMENT.test(segment) && segment !== '..')) return null
  return { mount: segments[0]!, path: segments.slice(1).join('/') }
}

/** The operator's Vault from the environment, or null when it is not configured. */
export function vaultSettingsFromEnv(env: NodeJS.ProcessEnv): VaultSettings | null {
  const address = env.GATEHOUSE_VAULT_ADDR
  const token = env.GATEHOUSE_VAULT_TOKEN
  if (!address || !token) return null
  const url = new URL(address)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('GATEHOUSE_VAULT_ADDR must be an http(s) URL')
  return { address: url, token, namespace: env.GATEHOUSE_VAULT_NAMESPACE || null, timeoutMs: VAULT_TIMEOUT_MS }
}

export class VaultReadError extends Error {
  override name = 'VaultReadError'
}

/**
 * The value of `key` in the KV v2 secret at `secretPath`; null when the secret or the key does
 * not exist (404, or no such key). A refused token (403), another status or an unreachable Vault
 * is a VaultReadError naming the status (never the token).
 */
export async function readVaultSecret(settings: VaultSettings, secretPath: string, key: string): Promise<string | null> {
  const location = parseVaultPath(secretPath)
  if (!location) throw new VaultReadError(`"${secretPath}" is not a <mount>/<path> Vault location`)
  const encoded = location.path.split('/').map(encodeURIComponent).join('/')
  const url = new URL(`v1/${encodeURIComponent(location.mount)}/data/${encoded}`, settings.address.href.endsWith('/') ? settings.address : `${settings.address.href}/`)
  const headers: Record<string, string> = { 'x-vault-token': settings.token, accept: 'application/json' }
  if (settings.namespace) headers['x-vault-namespace'] = settings.namespace
  let response: Response
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(settings.timeoutMs), redirect: 'error' })
  } catch (error) {
    throw new VaultReadError(`Vault at ${settings.address.origin} could not be reached (${(error as Error).name})`)
  }
  if (response.status === 404) {
    await response.body?.cancel()
    return null
  }
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new VaultReadError(`Vault answered ${response.status} for ${location.mount}/${location.path}${response.status === 403 ? ' (the token may not read it)' : ''}`)
  }
  const body = (await response.json().catch(() => null)) as { data?: { data?: Record<string, unknown> | null } } | null
  const data = body?.data?.data
  // A deleted or destroyed version answers data: null.
  if (data === undefined) throw new VaultReadError(`Vault's answer for ${location.mount}/${location.path} is not a KV version 2 secret`)
  const value = data?.[key]
  if (value === undefined || value === null) return null
  return typeof value === 'string' ? value : JSON.stringify(value)
}
