/** Test helpers for adapter suites: recorded-shape fixtures and driving a stream transform. */
import { readFileSync } from 'node:fs'
import type { ResponseContext, StreamResult, StreamTransform, UpstreamEvent } from '../adapter.ts'

/** Reads `__fixtures__/<name>` next to the calling test (pass `import.meta.url`). */
export function fixture<T = unknown>(testUrl: string, name: string): T {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, testUrl), 'utf8')) as T
}

export const testContext: ResponseContext = { requestModel: 'requested-model', responseId: 'gen-fallback-id', createdAt: 1_750_000_000 }

/** Feeds every event through `step`, then `finish`; returns all chunks in order and the result. */
export function runStream<Chunk>(transform: StreamTransform<unknown, Chunk>, events: UpstreamEvent[], context: ResponseContext = testContext): StreamResult<Chunk> {
  const state = transform.start(context)
  const chunks: Chunk[] = []
  for (const event of events) chunks.push(...transform.step(state, event))
  const result = transform.finish(state)
  return { ...result, chunks: [...chunks, ...result.chunks] }
}
