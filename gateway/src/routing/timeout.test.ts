import { describe, expect, it } from 'vitest'
import { withRequestTimeout } from './timeout.ts'

/** An attempt that answers after `ms`, or rejects when its signal aborts. */
function slowAttempt(ms: number, seen: { signal?: AbortSignal }): (signal: AbortSignal) => Promise<string> {
  return (signal) => {
    seen.signal = signal
    return new Promise((resolve, reject) => {
      const handle = setTimeout(() => resolve('answer'), ms)
      signal.addEventListener('abort', () => {
        clearTimeout(handle)
        reject(new Error('aborted'))
      })
    })
  }
}

describe('request_timeout', () => {
  it('fails an attempt that has not answered in time with a 408, cancelling it', async () => {
    const seen: { signal?: AbortSignal } = {}
    const started = performance.now()
    await expect(withRequestTimeout(30, new AbortController().signal, slowAttempt(5000, seen))).rejects.toMatchObject({ code: 'request_timeout', status: 408 })
    expect(performance.now() - started).toBeLessThan(1000)
    expect(seen.signal?.aborted).toBe(true)
  })

  it('lets an answer in time through, and a later client abort still reaches the upstream call', async () => {
    const client = new AbortController()
    const seen: { signal?: AbortSignal } = {}
    await expect(withRequestTimeout(500, client.signal, slowAttempt(5, seen))).resolves.toBe('answer')
    expect(seen.signal?.aborted).toBe(false)
    client.abort()
    expect(seen.signal?.aborted).toBe(true)
  })

  it('a client abort is not reported as a timeout', async () => {
    const client = new AbortController()
    const running = withRequestTimeout(1000, client.signal, slowAttempt(5000, {}))
    client.abort()
    await expect(running).rejects.toThrow('aborted')
  })
})
