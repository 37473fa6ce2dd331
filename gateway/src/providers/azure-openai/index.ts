/**
 * Azure OpenAI: OpenAI bodies, streams and errors (the OpenAI adapter's, reused), at Azure's paths.
 *
 * Options (from the provider resource):
 * - `resourceName`: the Azure resource; the base URL is `https://{resourceName}.openai.azure.com`
 *   unless the provider sets its own base URL.
 * - `deployment`: the deployment to call; defaults to the upstream model name, since deployments
 *   are usually named after their model.
 * - `apiVersion`: defaults to `2024-10-21`, the latest GA date-versioned data-plane API.
 * - `apiStyle`: `deployments` (default) calls `/openai/deployments/{deployment}/...?api-version=`;
 *   `v1` calls the version-less GA `/openai/v1/...` paths, where the body's `model` names the
 *   deployment.
 */
import type { JsonOperation, ProviderAdapter, TargetContext, Translated } from '../adapter.ts'
import { GatewayError } from '../../core/errors.ts'
import { openAIShapedAdapter } from '../openai/index.ts'

export const defaultAzureApiVersion = '2024-10-21'

const openAIShaped = openAIShapedAdapter({ kind: 'azure-openai', defaultBaseUrl: null, auth: { type: 'azure' } })

// A resource name becomes a host name: anything but letters, digits and hyphens could redirect the call.
const resourceNamePattern = /^[a-z0-9][a-z0-9-]{0,62}$/i

export function azureBaseUrl(options: Readonly<Record<string, string>>): string {
  const resourceName = options.resourceName
  if (!resourceName) throw new GatewayError('invalid_config', "Azure OpenAI needs the option 'resourceName' or a base URL on the provider")
  if (!resourceNamePattern.test(resourceName)) throw new GatewayError('invalid_config', "Azure OpenAI option 'resourceName' must be letters, digits and hyphens")
  return `https://${resourceName}.openai.azure.com`
}

function deploymentOf(target: TargetContext): string {
  return target.options.deployment || target.upstreamModel
}

/** Moves an OpenAI-shaped call to Azure's path for the operation (`chat/completions`, `embeddings`...). */
function atAzurePath(translated: Translated, operation: string, target: TargetContext): Translated {
  const deployment = deploymentOf(target)
  const upstream = { ...translated.upstream }
  if (target.options.apiStyle === 'v1') {
    upstream.path = `/openai/v1/${operation}`
    upstream.body = { ...(upstream.body as Record<string, unknown>), model: deployment }
  } else {
    const apiVersion = encodeURIComponent(target.options.apiVersion || defaultAzureApiVersion)
    upstream.path = `/openai/deployments/${encodeURIComponent(deployment)}/${operation}?api-version=${apiVersion}`
  }
  return { ...translated, upstream }
}

function atAzure<Operation extends JsonOperation<never, unknown>>(operation: Operation, path: string): Operation {
  return { ...operation, toUpstream: (request, target) => atAzurePath(operation.toUpstream(request, target), path, target) }
}

export const azureOpenAI: ProviderAdapter = {
  kind: 'azure-openai',
  defaultBaseUrl: null,
  baseUrlFor: azureBaseUrl,
  auth: { type: 'azure' },
  chat: atAzure(openAIShaped.chat!, 'chat/completions'),
  completions: atAzure(openAIShaped.completions!, 'completions'),
  embeddings: atAzure(openAIShaped.embeddings!, 'embeddings'),
  // Azure serves files, batches and the rest under its own paths, not OpenAI's.
  passthrough: false,
  parseError: openAIShaped.parseError,
}
