import { describe, expect, it } from 'vitest'
import type { Dispatcher } from 'undici'
import { CallbackBody } from './callback-body.ts'

/** A dispatcher controller that records what the body asked of it. */
function recordingController(): Dispatcher.DispatchController & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    aborted: false,
    paused: false,
    reason: null,
    pause() {
      calls.push('pause')
    },
    resume() {
      calls.push('resume')
    },
    abort() {
      calls.push('abort')
    },
  } as unknown as Dispatcher.DispatchController & { calls: string[] }
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<string> {
  let text = ''
  for await (const chunk of body) text += Buffer.from(chunk).toString('utf8')
  return text
}

describe('CallbackBody', () => {
  it('hands chunks to the reader in order, queued or awaited, then ends', async () => {
    const body = new CallbackBody()
    body.attach(recordingController())
    body.push(Buffer.from('a'))
    body.push(Buffer.from('b'))
    const reading = collect(body)
    await Promise.resolve()
    body.push(Buffer.from('c'))
    body.end()
    expect(await reading).toBe('abc')
  })

  it('hands a waiting reader the pieces of one network read together (an in-band error right after the first chunk is seen at once)', async () => {
    const body = new CallbackBody()
    body.attach(recordingController())
    const iterator = body.iterator()
    const first = iterator.next()
    body.push(Buffer.from('data: {"a":1}\n\n'))
    body.push(Buffer.from('data: {"error":{}}\n\n'))
    const { value } = await first
    expect(Buffer.from(value!).toString()).toBe('data: {"a":1}\n\ndata: {"error":{}}\n\n')
  })

  it('pauses the connection past the high-water mark and resumes once the reader caught up', async () => {
    const controller = recordingController()
    const body = new CallbackBody()
    body.attach(controller)
    const megabyte = Buffer.alloc(1024 * 1024)
    body.push(megabyte)
    expect(controller.calls).toEqual([])
    body.push(Buffer.alloc(1))
    expect(controller.calls).toEqual(['pause'])
    const iterator = body.iterator()
    await iterator.next()
    expect(controller.calls).toEqual(['pause', 'resume'])
  })

  it('rejects a waiting reader with the transport failure', async () => {
    const body = new CallbackBody()
    body.attach(recordingController())
    const reading = collect(body)
    body.fail(new Error('socket hang up'))
    await expect(reading).rejects.toThrow('socket hang up')
  })

  it('aborts the request when a for-await loop leaves early (the Readable default)', async () => {
    const controller = recordingController()
    const body = new CallbackBody()
    body.attach(controller)
    body.push(Buffer.from('first'))
    for await (const chunk of body) {
      expect(Buffer.from(chunk).toString()).toBe('first')
      break
    }
    expect(controller.calls).toEqual(['abort'])
    expect(body.destroyed).toBe(true)
  })

  it('keeps the request going when the iterator was asked not to destroy on return', async () => {
    const controller = recordingController()
    const body = new CallbackBody()
    body.attach(controller)
    body.push(Buffer.from('data: [DONE]\n\n'))
    const iterator = body.iterator({ destroyOnReturn: false })
    await iterator.next()
    await iterator.return!()
    expect(controller.calls).toEqual([])
    expect(body.destroyed).toBe(false)
  })

  it('dump reads off a short tail so the connection can be reused, and resolves at the end', async () => {
    const controller = recordingController()
    const body = new CallbackBody()
    body.attach(controller)
    const dumped = body.dump({ limit: 64 })
    body.push(Buffer.alloc(40))
    body.end()
    await dumped
    expect(controller.calls).toEqual([])
  })

  it('dump aborts the request when more than the limit follows', async () => {
    const controller = recordingController()
    const body = new CallbackBody()
    body.attach(controller)
    const dumped = body.dump({ limit: 64 })
    body.push(Buffer.alloc(40))
    body.push(Buffer.alloc(40))
    await dumped
    expect(controller.calls).toEqual(['abort'])
    expect(body.destroyed).toBe(true)
  })

  it('destroy ends a waiting reader and aborts once', async () => {
    const controller = recordingController()
    const body = new CallbackBody()
    body.attach(controller)
    const iterator = body.iterator()
    const waiting = iterator.next()
    body.destroy()
    body.destroy()
    expect(await waiting).toEqual({ value: undefined, done: true })
    expect(controller.calls).toEqual(['abort'])
  })
})
