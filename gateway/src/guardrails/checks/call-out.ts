/**
 * The verdict call the webhook and partner checks make: POST a JSON body through the SSRF-safe
 * dispatcher, bounded in time (the check's signal) and in answer size, and read `{verdict,
 * explanation?}` back. Anything else (a non-2xx status, a body that is not that shape) is an
 * error, which the guardrail turns into a pass or a failure according to `failOnError`.
 */
import { request } from '../../core/undici.ts'
import type { Dispatcher } from 'undici'
import { z } from 'zod'
import type { CheckOutcome } from './check.ts'

const MAX_ANSWER_BYTES = 64 * 1024

const verdictAnswer = z.object({ verdict: z.boolean(), explanation: z.string().max(4096).optional() })

export class CallOutError extends Error {
  override name = 'CallOutError'
}

export async function postForVerdict(
  url: string,
  payload: string,
  headers: Record<string, string>,
  dispatcher: Dispatcher,
  signal: AbortSignal,
): Promise<CheckOutcome> {
  const response = await request(url, { method: 'POST', body: payload, headers: { ...headers, 'content-type': 'application/json' }, dispatcher, signal })
  let size = 0
  const parts: Buffer[] = []
  for await (const part of response.body) {
    size += (part as Buffer).length
    if (size > MAX_ANSWER_BYTES) {
      response.body.on('error', () => undefined)
      response.body.destroy()
      throw new CallOutError(`answer larger than ${MAX_ANSWER_BYTES} bytes`)
    }
    parts.push(part as Buffer)
  }
  if (response.statusCode < 200 || response.statusCode > 299) throw new CallOutError(`answered HTTP ${response.statusCode}`)
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.concat(parts).toString('utf8'))
  } catch {
    throw new CallOutError('answer is not JSON')
  }
  const answer = verdictAnswer.safeParse(parsed)
  if (!answer.success) throw new CallOutError('answer is not {verdict: boolean, explanation?: string}')
  return { verdict: answer.data.verdict, explanation: answer.data.explanation ?? (answer.data.verdict ? 'passed' : 'failed') }
}
