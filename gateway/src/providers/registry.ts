/**
 * Every provider kind the gateway can route to. A family is one folder with one line here; an
 * OpenAI-compatible provider is one row in `openai-compatible.ts`.
 */
import type { ProviderAdapter } from './adapter.ts'
import { anthropic } from './anthropic/index.ts'
import { azureOpenAI } from './azure-openai/index.ts'
import { bedrock } from './bedrock/index.ts'
import { cohere } from './cohere/index.ts'
import { google } from './google/index.ts'
import { mistralAI } from './mistral-ai/index.ts'
import { openai } from './openai/index.ts'
import { openAICompatibleAdapters } from './openai-compatible.ts'
import { vertexAI } from './vertex-ai/index.ts'
import type { ProviderKind } from './kinds.ts'

const families = {
  openai,
  anthropic,
  bedrock,
  google,
  'vertex-ai': vertexAI,
  cohere,
  'azure-openai': azureOpenAI,
  'mistral-ai': mistralAI,
} satisfies Partial<Record<ProviderKind, ProviderAdapter>>

/** Exactly the shared kinds: a kind missing here, or an adapter under a kind the list lacks, does not compile. */
const byKind: Record<ProviderKind, ProviderAdapter> & Record<Exclude<keyof typeof families | keyof typeof openAICompatibleAdapters, ProviderKind>, never> = {
  ...openAICompatibleAdapters,
  ...families,
}

const adapters: ReadonlyMap<string, ProviderAdapter> = new Map(Object.entries(byKind))

export function adapterFor(kind: string): ProviderAdapter | undefined {
  return adapters.get(kind)
}

export function providerKinds(): string[] {
  return [...adapters.keys()].sort()
}
