/**
 * SSO (OpenID Connect) settings, read once at start from the environment (Helm values set them):
 *
 *   GATEHOUSE_SSO_ISSUER          the IdP's issuer URL; its /.well-known/openid-configuration is read
 *   GATEHOUSE_SSO_CLIENT_ID       the client registered at the IdP
 *   GATEHOUSE_SSO_CLIENT_SECRET   its secret: plain (from a Kubernetes Secret) or a Gatehouse envelope
 *                                 (`ghe1.…`, sealed with GATEHOUSE_ENCRYPTION_KEY under the context
 *                                 `sso:client_secret`); absent for a public client (PKCE only)
 *   GATEHOUSE_SSO_REDIRECT_URI    this control plane's callback as registered: https://…/v1/auth/sso/callback
 *   GATEHOUSE_SSO_SCOPES          space-separated; `openid` is always asked for (default "openid email profile")
 *   GATEHOUSE_SSO_EMAIL_CLAIM     default `email`
 *   GATEHOUSE_SSO_NAME_CLAIM      default `name` (given_name and family_name are read when present)
 *   GATEHOUSE_SSO_GROUPS_CLAIM    e.g. `groups`; unset: sign-in does not touch group membership
 *   GATEHOUSE_SSO_DEFAULT_ROLE    organisation role of auto-provisioned users: member (default) or admin
 *   GATEHOUSE_SSO_AUTO_PROVISION  `false` refuses unknown users instead of creating them
 */
import type { Keyring } from '@gatehouse/gateway/snapshot'

export const SSO_SECRET_CONTEXT = 'sso:client_secret'

export interface SsoSettings {
  issuer: URL
  clientId: string
  clientSecret: string | null
  redirectUri: URL
  scopes: string[]
  claims: { email: string; name: string; groups: string | null }
  defaultRole: 'member' | 'admin'
  autoProvision: boolean
}

function claimName(value: string | undefined, fallback: string): string {
  const name = value?.trim() || fallback
  if (!/^[\w:./-]{1,128}$/.test(name)) throw new Error(`SSO claim name "${name}" is not valid`)
  return name
}

/** The settings, or null when SSO is not configured (no issuer). */
export function ssoSettingsFromEnv(env: NodeJS.ProcessEnv, keyring: Keyring | null): SsoSettings | null {
  const issuer = env.GATEHOUSE_SSO_ISSUER?.trim()
  if (!issuer) return null
  const clientId = env.GATEHOUSE_SSO_CLIENT_ID?.trim()
  const redirectUri = env.GATEHOUSE_SSO_REDIRECT_URI?.trim()
  if (!clientId || !redirectUri) throw new Error('GATEHOUSE_SSO_ISSUER needs GATEHOUSE_SSO_CLIENT_ID and GATEHOUSE_SSO_REDIRECT_URI')
  let clientSecret = env.GATEHOUSE_SSO_CLIENT_SECRET?.trim() || null
  if (clientSecret?.startsWith('ghe1.')) {
    if (!keyring) throw new Error('GATEHOUSE_SSO_CLIENT_SECRET is sealed but GATEHOUSE_ENCRYPTION_KEY is not set')
    clientSecret = keyring.open(clientSecret, SSO_SECRET_CONTEXT)
  }
  const scopes = new Set(['openid', ...(env.GATEHOUSE_SSO_SCOPES ?? 'openid email profile').split(/[\s,]+/).filter(Boolean)])
  for (const scope of scopes) if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) throw new Error(`SSO scope "${scope}" is not a valid OAuth scope`)
  const role = env.GATEHOUSE_SSO_DEFAULT_ROLE?.trim() || 'member'
  if (role !== 'member' && role !== 'admin') throw new Error('GATEHOUSE_SSO_DEFAULT_ROLE must be member or admin')
  const groups = env.GATEHOUSE_SSO_GROUPS_CLAIM?.trim()
  return {
    issuer: new URL(issuer),
    clientId,
    clientSecret,
    redirectUri: new URL(redirectUri),
    scopes: [...scopes],
    claims: { email: claimName(env.GATEHOUSE_SSO_EMAIL_CLAIM, 'email'), name: claimName(env.GATEHOUSE_SSO_NAME_CLAIM, 'name'), groups: groups ? claimName(groups, 'groups') : null },
    defaultRole: role,
    autoProvision: (env.GATEHOUSE_SSO_AUTO_PROVISION ?? 'true').toLowerCase() !== 'false',
  }
}

/** Plain http is allowed only to an issuer on loopback (a local IdP, tests); anything else needs TLS. */
export function isLoopbackIssuer(issuer: URL): boolean {
  return issuer.protocol === 'http:' && (issuer.hostname === '127.0.0.1' || issuer.hostname === 'localhost' || issuer.hostname === '[::1]')
}
