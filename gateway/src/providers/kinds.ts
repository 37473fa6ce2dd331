/**
 * Every provider kind Gatehouse speaks: the one list the gateway's adapter registry, the Provider
 * CRD's enum and the admin API's validation share. A kind is added here and in the registry in the
 * same change; the registry's types refuse a kind missing from either side.
 */
export const PROVIDER_KINDS = [
  'openai',
  'anthropic',
  'azure-openai',
  'bedrock',
  'google',
  'vertex-ai',
  'cohere',
  'mistral-ai',
  'groq',
  'together-ai',
  'fireworks-ai',
  'deepseek',
  'x-ai',
  'openrouter',
  'perplexity-ai',
  'ollama',
  'vllm',
  'lm-studio',
  'nebius',
  'sambanova',
  'cerebras',
] as const

export type ProviderKind = (typeof PROVIDER_KINDS)[number]

/** Self-hosted servers that usually run without an API key. */
export const KEYLESS_PROVIDER_KINDS: readonly ProviderKind[] = ['ollama', 'vllm', 'lm-studio']
