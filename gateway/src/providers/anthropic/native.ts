/**
 * The native Messages path: a `POST /v1/messages` body sent to Anthropic as is (only the model name
 * the provider knows is put in), and Anthropic's answer and events relayed unchanged. The stream
 * transform only watches the events for the usage and stop reason accounting needs.
 */
import type { NativeMessagesOperation, StreamTransform, TargetContext, UpstreamEvent } from '../adapter.ts'
import { isRecord } from '../shared/errors.ts'
import { expectAnthropicMessage, usageFromAnthropic } from './response.ts'
import { accountingResult, anthropicEventType, recordAccounting, type AnthropicAccounting } from './stream.ts'
import { ANTHROPIC_VERSION, type AnthropicUsage } from './types.ts'

/** `anthropic-version`, plus `anthropic-beta` when the target opts into beta features (`options.anthropicBeta`). */
export function anthropicHeaders(options: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION }
  if (options.anthropicBeta) headers['anthropic-beta'] = options.anthropicBeta
  return headers
}

/**
 * Relays Anthropic events as they are. A step turns one upstream event into one client event with
 * the name Anthropic gives it; `transformEvent` lets a framing that wraps the events (Bedrock
 * invoke's base64 `chunk`) unwrap them first.
 */
export function relayAnthropicEvents(unwrap: (event: UpstreamEvent) => UpstreamEvent | null = (event) => event): StreamTransform<AnthropicAccounting, UpstreamEvent> {
  return {
    start: () => ({ usage: {}, stopReason: null }),
    step(state, upstream) {
      const event = unwrap(upstream)
      if (!event || !isRecord(event.data)) return []
      const type = anthropicEventType(event)
      recordAccounting(state, type, event.data)
      return [{ event: String(type), data: event.data }]
    },
    finish: (state) => ({ chunks: [], ...accountingResult(state) }),
  }
}

export const anthropicNativeMessages: NativeMessagesOperation = {
  framing: 'sse',
  accepts: () => true,
  toUpstream: (body: Record<string, unknown>, target: TargetContext) => ({
    upstream: { method: 'POST', path: '/messages', headers: anthropicHeaders(target.options), body: { ...body, model: target.upstreamModel } },
    warnings: [],
  }),
  fromUpstream: (body) => expectAnthropicMessage(body),
  usage: (response) => usageFromAnthropic(response.usage as AnthropicUsage | undefined),
  stream: relayAnthropicEvents(),
}
