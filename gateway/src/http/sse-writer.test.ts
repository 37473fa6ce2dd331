import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { SseBytes } from '../core/relayed-events.ts'
import { pipeSse, startSse, type StreamWriteResult } from './sse-writer.ts'

const servers: Array<{ close(): void }> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** Serves one SSE answer written by `write` and returns what a client received. */
async function served(write: (response: ServerResponse) => Promise<StreamWriteResult>): Promise<{ body: string; result: StreamWriteResult }> {
  let result: StreamWriteResult | null = null
  const server = createServer((_request, response) => {
    startSse(response, 200, {})
    void write(response).then((outcome) => {
      result = outcome
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const answer = await fetch(`http://127.0.0.1:${port}/`)
  expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  const body = await answer.text()
  return { body, result: result! }
}

async function* batches(...list: unknown[][]): AsyncGenerator<unknown[]> {
  for (const batch of list) yield batch
}

const relayed = (text: string): SseBytes => new SseBytes(Buffer.from(text))

describe('pipeSse', () => {
  it('writes relayed events byte for byte and framed chunks around them, in order, then [DONE]', async () => {
    const { body, result } = await served((response) =>
      pipeSse(response, batches([relayed('data: {"n":1}\n\n: kept\n\n')], [{ n: 2 }, relayed('data: {"n":3}\n\n'), { n: 4 }])),
    )
    expect(body).toBe('data: {"n":1}\n\n: kept\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: {"n":4}\n\ndata: [DONE]\n\n')
    expect(result).toEqual({ completed: true, error: null })
  })

  it('ends a stream that fails after relayed events with an error event, not [DONE]', async () => {
    async function* failing(): AsyncGenerator<unknown[]> {
      yield [relayed('data: {"n":1}\n\n')]
      throw new GatewayError('upstream_error', 'The provider failed mid-stream')
    }
    const { body, result } = await served((response) => pipeSse(response, failing()))
    const events = body.split('\n\n').filter((event) => event !== '')
    expect(events[0]).toBe('data: {"n":1}')
    expect(JSON.parse(events[1]!.slice('data: '.length))).toMatchObject({ error: { code: 'upstream_error' } })
    expect(body).not.toContain('[DONE]')
    expect(result.completed).toBe(false)
  })
})
