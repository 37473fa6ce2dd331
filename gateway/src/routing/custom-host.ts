/**
 * Which custom hosts a provider's owner allowed (`x-gateway-config`'s `custom_host` receives the
 * provider's stored credential, so the caller must not choose it freely). The provider option
 * `allowedCustomHosts` lists entries separated by commas or spaces:
 *
 *   https://llm.internal.example:8443   an origin: scheme, host and port must all match
 *   llm.example.com                     a host name: any scheme and port on that exact host
 *   *.example.com                       any host below example.com (not example.com itself)
 */
export const ALLOWED_CUSTOM_HOSTS_OPTION = 'allowedCustomHosts'

function entries(allowlist: string | undefined): string[] {
  return (allowlist ?? '').split(/[\s,]+/).filter((entry) => entry !== '')
}

function matches(entry: string, host: URL): boolean {
  const hostname = host.hostname.toLowerCase()
  const pattern = entry.toLowerCase()
  if (pattern.includes('://')) {
    try {
      return new URL(pattern).origin === host.origin
    } catch {
      return false
    }
  }
  if (pattern.startsWith('*.')) return hostname.endsWith(pattern.slice(1)) && hostname.length > pattern.length - 1
  return hostname === pattern
}

export function customHostAllowed(host: URL, allowlist: string | undefined): boolean {
  return entries(allowlist).some((entry) => matches(entry, host))
}
