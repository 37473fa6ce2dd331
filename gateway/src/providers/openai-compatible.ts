/**
 * Providers that speak the OpenAI wire format. Adding one is one row: a kind, a default base URL and
 * what it does not serve. Everything else (auth, streaming, errors) is the OpenAI adapter's.
 */
import type { ProviderAdapter } from './adapter.ts'
import { openAIShapedAdapter, type OpenAIShapedOptions } from './openai/index.ts'

type Row = Omit<OpenAIShapedOptions, 'kind'>

export const openAICompatibleRows = {
  groq: { defaultBaseUrl: 'https://api.groq.com/openai/v1', supports: { completions: false, embeddings: false } },
  'together-ai': { defaultBaseUrl: 'https://api.together.xyz/v1' },
  'fireworks-ai': { defaultBaseUrl: 'https://api.fireworks.ai/inference/v1' },
  deepseek: { defaultBaseUrl: 'https://api.deepseek.com/v1', supports: { embeddings: false, passthrough: false } },
  'x-ai': { defaultBaseUrl: 'https://api.x.ai/v1', supports: { embeddings: false } },
  openrouter: { defaultBaseUrl: 'https://openrouter.ai/api/v1', supports: { embeddings: false, passthrough: false } },
  'perplexity-ai': { defaultBaseUrl: 'https://api.perplexity.ai', paths: { chat: '/chat/completions' }, supports: { completions: false, embeddings: false, passthrough: false } },
  // Local servers have no well-known address: a Provider must set its base URL.
  ollama: { defaultBaseUrl: 'http://127.0.0.1:11434/v1', auth: { type: 'none' } },
  vllm: { defaultBaseUrl: null },
  'lm-studio': { defaultBaseUrl: 'http://127.0.0.1:1234/v1', auth: { type: 'none' } },
  nebius: { defaultBaseUrl: 'https://api.studio.nebius.ai/v1' },
  sambanova: { defaultBaseUrl: 'https://api.sambanova.ai/v1', supports: { completions: false } },
  cerebras: { defaultBaseUrl: 'https://api.cerebras.ai/v1', supports: { completions: false, embeddings: false } },
} satisfies Record<string, Row>

export const openAICompatibleAdapters = Object.fromEntries(
  Object.entries(openAICompatibleRows).map(([kind, row]) => [kind, openAIShapedAdapter({ kind, ...(row as Row) })]),
) as Record<keyof typeof openAICompatibleRows, ProviderAdapter>
