/** Bedrock runtime addresses: the regional endpoint and the per-model operation paths. */
import { GatewayError } from '../../core/errors.ts'

// Region names are lowercase words and a number (us-east-1, eu-central-2, us-gov-west-1); checking
// the shape keeps an option from steering the host name anywhere else.
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/

export function bedrockRegion(options: Readonly<Record<string, string>>): string {
  const region = options.region
  if (!region) throw new GatewayError('invalid_config', "A Bedrock provider needs the 'region' option (e.g. us-east-1)", { param: 'options.region' })
  if (!REGION.test(region)) throw new GatewayError('invalid_config', `'${region.slice(0, 40)}' is not an AWS region name`, { param: 'options.region' })
  return region
}

export function bedrockBaseUrl(options: Readonly<Record<string, string>>): string {
  return `https://bedrock-runtime.${bedrockRegion(options)}.amazonaws.com`
}

export type BedrockOperation = 'converse' | 'converse-stream' | 'invoke' | 'invoke-with-response-stream'

/** Model ids can be ARNs or carry a version after ':', so the id is one encoded path segment. */
export function modelPath(modelId: string, operation: BedrockOperation): string {
  return `/model/${encodeURIComponent(modelId)}/${operation}`
}
