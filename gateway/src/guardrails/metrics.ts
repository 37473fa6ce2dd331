/**
 * What guardrails cost streams: how many characters output checks held back (the most held at
 * once, per stream) and the time to first token they added (first chunk from the provider to
 * first chunk released to the client). Registered on the gateway's own registry.
 */
import { Counter, Histogram, type Registry } from 'prom-client'

export interface GuardrailMetrics {
  observeHoldBack(mode: 'none' | 'window' | 'all', maxHeldChars: number, addedFirstTokenSeconds: number | null): void
  countVerdict(hook: 'beforeRequestHook' | 'afterRequestHook', outcome: 'passed' | 'flagged' | 'denied'): void
}

export function createGuardrailMetrics(registry: Registry): GuardrailMetrics {
  const held = new Histogram({
    name: 'gatehouse_guardrail_stream_held_chars',
    help: 'Most characters of a streamed answer held back at once while output guardrails judged it, by hold-back mode.',
    labelNames: ['mode'] as const,
    buckets: [0, 64, 256, 1024, 4096, 16_384, 65_536, 262_144],
    registers: [registry],
  })
  const addedTtft = new Histogram({
    name: 'gatehouse_guardrail_stream_added_ttft_seconds',
    help: 'Time to first token added by output guardrails holding a stream back (first chunk received to first chunk released), by hold-back mode.',
    labelNames: ['mode'] as const,
    buckets: [0.0001, 0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30],
    registers: [registry],
  })
  const verdicts = new Counter({
    name: 'gatehouse_guardrail_verdicts_total',
    help: 'Guardrail verdicts by hook and outcome (passed, flagged: failed without deny, denied).',
    labelNames: ['hook', 'outcome'] as const,
    registers: [registry],
  })
  return {
    observeHoldBack(mode, maxHeldChars, addedFirstTokenSeconds) {
      held.observe({ mode }, maxHeldChars)
      if (addedFirstTokenSeconds !== null) addedTtft.observe({ mode }, addedFirstTokenSeconds)
    },
    countVerdict(hook, outcome) {
      verdicts.inc({ hook, outcome })
    },
  }
}
