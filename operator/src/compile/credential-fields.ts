/**
 * Provider settings arrive on the admin API under the wire names of the API surface
 * (`key`, `aws_secret_access_key`, `azure_resource_name`, ...) and reach the gateway under its own
 * credential and option names (`apiKey`, `secretAccessKey`, `resourceName`, ...), the same names a
 * Provider resource's Secret and options use. Secret fields are sealed at rest and never answered;
 * the others are plain options.
 */

import { privateNetworkOptionNames } from '@gatehouse/gateway/snapshot'

/** Wire name -> gateway credential name. */
const SECRET_FIELDS: Readonly<Record<string, string>> = {
  key: 'apiKey',
  api_key: 'apiKey',
  aws_access_key_id: 'accessKeyId',
  aws_secret_access_key: 'secretAccessKey',
  aws_session_token: 'sessionToken',
  azure_entra_client_secret: 'clientSecret',
  vertex_service_account_json: 'serviceAccountJson',
}

/** Wire name -> gateway option name. Unlisted, non-secret names are kept as they are. */
const OPTION_FIELDS: Readonly<Record<string, string>> = {
  openai_organization: 'organization',
  openai_project: 'project',
  azure_resource_name: 'resourceName',
  azure_deployment_name: 'deploymentName',
  azure_api_version: 'apiVersion',
  azure_auth_mode: 'authMode',
  azure_entra_tenant_id: 'tenantId',
  azure_entra_client_id: 'clientId',
  // The token scope the Azure signer asks Entra ID for (default: Cognitive Services).
  azure_entra_scope: 'entraScope',
  azure_managed_client_id: 'managedClientId',
  azure_foundry_url: 'foundryUrl',
  aws_region: 'region',
  aws_auth_type: 'authType',
  aws_role_arn: 'roleArn',
  aws_external_id: 'externalId',
  vertex_region: 'region',
  vertex_project_id: 'projectId',
  vertex_auth_type: 'authType',
  workers_ai_account_id: 'accountId',
  snowflake_account: 'account',
}

/** Field names that hold secrets even when not listed above (defence in depth). */
const SECRET_NAME = /secret|password|token|private|credential|service_account|api_?key$/i
const GATEWAY_SECRET_NAMES = new Set(Object.values(SECRET_FIELDS))

export function isSecretField(wireName: string): boolean {
  // `allowPrivateNetwork` is a switch the compiler reads, not a secret, though its name says "private".
  if (privateNetworkOptionNames({ [wireName]: true }).length > 0) return false
  return wireName in SECRET_FIELDS || GATEWAY_SECRET_NAMES.has(wireName) || SECRET_NAME.test(wireName)
}

/** The gateway's name for a wire field (secret or option). */
export function gatewayFieldName(wireName: string): string {
  return SECRET_FIELDS[wireName] ?? OPTION_FIELDS[wireName] ?? wireName
}

/**
 * Splits wire-named settings into sealed credentials and plain options (both under gateway names).
 * Non-string option values (objects such as azure_deployment_config) are kept as JSON text.
 */
export function splitProviderFields(fields: Record<string, unknown>): { credentials: Record<string, string>; options: Record<string, string> } {
  const credentials: Record<string, string> = {}
  const options: Record<string, string> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (value === null || value === undefined) continue
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    if (isSecretField(name)) credentials[gatewayFieldName(name)] = text
    else options[gatewayFieldName(name)] = text
  }
  return { credentials, options }
}
