/**
 * Reaching private networks is an organisation decision (see the gateway's snapshot/network.ts):
 * a workspace principal may not switch it on for its own provider or integration through
 * `configurations`. Organisation-level principals (admin keys, owners and admins) may.
 */
import { privateNetworkOptionNames } from '@gatehouse/gateway/snapshot'
import { AdminError } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'

export function refuseSelfGrantedPrivateNetwork(principal: Principal, configurations: Readonly<Record<string, unknown>> | undefined): void {
  if (configurations === undefined || principal.isOrganisationLevel) return
  const [name] = privateNetworkOptionNames(configurations)
  if (name === undefined) return
  throw new AdminError('AB03', `configurations.${name}: only an organisation admin may let a provider reach private networks`, { param: `configurations.${name}` })
}
