import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FakeKubeClient } from './fake-client.ts'
import { KubeApiError, SECRETS } from './client.ts'
import { Informer } from './informer.ts'

const secret = (name: string, value: string) => ({ metadata: { name, namespace: 'ns' }, data: { key: value } })

describe('Informer', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('lists, then follows the watch, and reports synced after the first list', async () => {
    const client = new FakeKubeClient()
    client.apply(SECRETS, secret('one', 'a'))
    const informer = new Informer(client, SECRETS, { namespace: null })
    const seen: string[] = []
    informer.on((event, object) => seen.push(`${event}:${object.metadata.name}`))
    informer.start()
    await informer.synced
    await vi.advanceTimersByTimeAsync(0)
    client.apply(SECRETS, secret('two', 'b'))
    client.delete(SECRETS, 'ns', 'one')
    expect(seen).toEqual(['upsert:one', 'upsert:two', 'delete:one'])
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['two'])
    informer.stop()
  })

  it('restarts a failed watch with backoff and relists what it missed meanwhile', async () => {
    const client = new FakeKubeClient()
    client.apply(SECRETS, secret('one', 'a'))
    const errors: number[] = []
    const informer = new Informer(client, SECRETS, {
      namespace: 'ns',
      restartInitialDelayMs: 100,
      restartMaxDelayMs: 1_000,
      onError: (_error, retryInMs) => errors.push(retryInMs),
    })
    const seen: string[] = []
    informer.on((event, object) => seen.push(`${event}:${object.metadata.name}`))
    informer.start()
    await vi.advanceTimersByTimeAsync(0)

    client.failWith = new KubeApiError(503, 'ServiceUnavailable', 'down')
    client.breakWatches(new Error('connection reset'))
    await vi.advanceTimersByTimeAsync(5_000)
    expect(errors.length).toBeGreaterThan(2)
    // Capped and growing (jitter takes up to half off).
    expect(Math.max(...errors)).toBeLessThanOrEqual(1_000)
    expect(errors[2]!).toBeGreaterThanOrEqual(200)

    // While it was down: one deleted, another created, without any watch event reaching us.
    client.delete(SECRETS, 'ns', 'one')
    client.apply(SECRETS, secret('three', 'c'))
    seen.length = 0
    client.failWith = null
    await vi.advanceTimersByTimeAsync(2_000)
    expect(client.watchCount).toBe(1)
    expect(seen).toEqual(expect.arrayContaining(['delete:one', 'upsert:three']))
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['three'])
    informer.stop()
  })

  it('relists on 410 Gone at once and periodically', async () => {
    const client = new FakeKubeClient()
    const informer = new Informer(client, SECRETS, { namespace: null, relistIntervalMs: 10_000 })
    informer.start()
    await vi.advanceTimersByTimeAsync(0)
    const listsBefore = client.calls
    client.breakWatches(new KubeApiError(410, 'Expired', 'too old resource version'))
    await vi.advanceTimersByTimeAsync(0)
    expect(client.calls).toBe(listsBefore + 2)
    await vi.advanceTimersByTimeAsync(10_001)
    expect(client.calls).toBe(listsBefore + 4)
    expect(client.watchCount).toBe(1)
    informer.stop()
    expect(client.watchCount).toBe(0)
  })
})
