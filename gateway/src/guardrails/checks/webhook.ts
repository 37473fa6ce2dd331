/**
 * `default.webhook`: your service decides. The gateway POSTs `{eventType, text, request, metadata,
 * model}` (the request body, never its headers) to `webhookURL` and expects `{verdict,
 * explanation?}` within `timeout` ms (default 3000). With `signingSecret` each call is signed:
 * `x-gatehouse-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, so the service
 * can refuse forged or replayed calls. An error (timeout, unreachable, malformed answer) passes the
 * check unless `failOnError` is set.
 */
import { createHmac } from 'node:crypto'
import { z } from 'zod'
import { defineCheck } from './check.ts'
import { postForVerdict } from './call-out.ts'

export const SIGNATURE_HEADER = 'x-gatehouse-signature'

export function signature(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`
}

export const webhook = defineCheck({
  id: 'default.webhook',
  parameters: z.object({
    webhookURL: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).default({}),
    timeout: z.int().min(1).max(120_000).default(3000),
    failOnError: z.boolean().default(false),
    signingSecret: z.string().min(16).optional(),
  }),
  compile({ webhookURL, headers, timeout, failOnError, signingSecret }, { dispatcher }) {
    return {
      timeoutMs: timeout,
      failOnError,
      mutates: false,
      failsEarly: false,
      run({ hook, text, body, metadata, model, signal }) {
        const payload = JSON.stringify({ eventType: hook, text, request: body, metadata, model })
        const signed = signingSecret === undefined ? headers : { ...headers, [SIGNATURE_HEADER]: signature(signingSecret, Math.floor(Date.now() / 1000), payload) }
        return postForVerdict(webhookURL, payload, signed, dispatcher, signal)
      },
    }
  },
})
