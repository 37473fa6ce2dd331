/**
 * Where Vertex AI serves a model. Options: `project` (required) and `location` (default
 * `us-central1`; `global` uses the global endpoint). Claude models are served by the `anthropic`
 * publisher: a model named `claude-*`, or any model with option `publisher=anthropic`.
 */
import type { TargetContext } from '../adapter.ts'
import { GatewayError } from '../../core/errors.ts'

export const defaultVertexLocation = 'us-central1'

// Both values become part of a host name or a path: letters, digits and hyphens only.
const namePattern = /^[a-z0-9][a-z0-9-]{0,62}$/i

function checked(options: Readonly<Record<string, string>>, name: 'project' | 'location', fallback?: string): string {
  const value = options[name] || fallback
  if (!value) throw new GatewayError('invalid_config', `Vertex AI needs the option '${name}'`)
  if (!namePattern.test(value)) throw new GatewayError('invalid_config', `Vertex AI option '${name}' must be letters, digits and hyphens`)
  return value
}

export function vertexBaseUrl(options: Readonly<Record<string, string>>): string {
  const location = checked(options, 'location', defaultVertexLocation)
  return location === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${location}-aiplatform.googleapis.com/v1`
}

export type VertexPublisher = 'google' | 'anthropic'

export function publisherOf(target: TargetContext): VertexPublisher {
  if (target.options.publisher === 'anthropic' || target.upstreamModel.startsWith('claude')) return 'anthropic'
  return 'google'
}

/** `/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}`, without the `:method`. */
export function vertexModelPath(target: TargetContext, publisher: VertexPublisher): string {
  const project = checked(target.options, 'project')
  const location = checked(target.options, 'location', defaultVertexLocation)
  // `@` is legal in a path segment and Vertex names model versions with it (`claude-...@20250929`).
  const model = encodeURIComponent(target.upstreamModel).replaceAll('%40', '@')
  return `/projects/${project}/locations/${location}/publishers/${publisher}/models/${model}`
}
