/**
 * The only place that writes server-sent events to clients (and `[DONE]`). Honours backpressure,
 * stops when the client goes away, and ends a stream that fails mid-way with an error event so a
 * client never mistakes a cut for a finished answer.
 */
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { toGatewayError } from '../errors.ts'

export interface StreamWriteResult {
  completed: boolean
  error: unknown
}

export function startSse(response: ServerResponse, status: number, headers: Record<string, string>): void {
  response.writeHead(status, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  response.flushHeaders()
}

async function write(response: ServerResponse, text: string): Promise<boolean> {
  if (response.destroyed) return false
  if (!response.write(text)) {
    await Promise.race([once(response, 'drain'), once(response, 'close')])
  }
  return !response.destroyed
}

export async function pipeSse(response: ServerResponse, chunks: AsyncIterable<unknown>, options: { done?: boolean; eventName?: (chunk: unknown) => string | undefined } = {}): Promise<StreamWriteResult> {
  try {
    for await (const chunk of chunks) {
      const name = options.eventName?.(chunk)
      const frame = `${name === undefined ? '' : `event: ${name}\n`}data: ${JSON.stringify(chunk)}\n\n`
      if (!(await write(response, frame))) return { completed: false, error: null }
    }
    if (options.done !== false) await write(response, 'data: [DONE]\n\n')
    response.end()
    return { completed: true, error: null }
  } catch (error) {
    if (!response.destroyed) {
      const body = toGatewayError(error).toBody()
      response.end(`${options.eventName ? 'event: error\n' : ''}data: ${JSON.stringify(body)}\n\n`)
    }
    return { completed: false, error }
  }
}
