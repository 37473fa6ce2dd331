/** Every provider simulator by name: what the CLI and the benchmark start. */
import type { ProviderDefinition } from './base.ts'
import { anthropicProvider } from './anthropic.ts'
import { azureProvider } from './azure.ts'
import { bedrockProvider } from './bedrock.ts'
import { cohereProvider } from './cohere.ts'
import { googleProvider } from './google.ts'
import { mistralProvider } from './mistral.ts'
import { openaiProvider } from './openai.ts'

export const providers: Readonly<Record<string, ProviderDefinition>> = {
  openai: openaiProvider,
  anthropic: anthropicProvider,
  azure: azureProvider,
  bedrock: bedrockProvider,
  cohere: cohereProvider,
  google: googleProvider,
  mistral: mistralProvider,
}

export { SIMULATOR_API_KEY, startSimulator } from './base.ts'
export { startAnthropicSimulator } from './anthropic.ts'
export { startAzureSimulator } from './azure.ts'
export { startBedrockSimulator } from './bedrock.ts'
export { startCohereSimulator } from './cohere.ts'
export { startGoogleSimulator } from './google.ts'
export { startMistralSimulator } from './mistral.ts'
export { startOpenAISimulator } from './openai.ts'
export type { Fault, RecordedRequest, Simulator, SimulatorOptions, SplitWrites } from './base.ts'
