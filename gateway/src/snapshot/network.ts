/**
 * Who decides that a provider may reach private networks (loopback, RFC 1918, link-local, CGNAT):
 * the rule the control plane compiles into the snapshot's `network` field, kept here so the admin
 * API, the compiler and the gateway read one definition. Never the workspace that owns the
 * provider: an operator who declared it (file or Kubernetes resource), an organisation-wide
 * setting, or an organisation admin setting the provider option below.
 */
import type { ProviderNetwork } from './schema.ts'

/** The provider/integration option an organisation admin sets to `"true"`. */
export const PRIVATE_NETWORK_OPTION = 'allowPrivateNetwork'

/** Spellings that mean the option (the wire form `allow_private_network` included). */
const PRIVATE_NETWORK_NAME = /^allow_?private_?networks?$/i

/** The option names in `options` that speak about private networks (whatever their value). */
export function privateNetworkOptionNames(options: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(options).filter((name) => PRIVATE_NETWORK_NAME.test(name))
}

export interface NetworkDecision {
  /** The provider (or its integration) is declared by an operator: a file or a Kubernetes resource. */
  declaredByOperator: boolean
  /** The organisation setting that lets every provider reach private networks. */
  organisationAllows: boolean
  /** Provider and integration options (only organisation admins may set the private-network one). */
  options: Readonly<Record<string, string>>
}

export function providerNetwork(decision: NetworkDecision): ProviderNetwork {
  if (decision.declaredByOperator || decision.organisationAllows) return 'private-allowed'
  const granted = privateNetworkOptionNames(decision.options).some((name) => decision.options[name] === 'true')
  return granted ? 'private-allowed' : 'public'
}
