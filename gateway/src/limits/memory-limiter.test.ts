import { limiterContract } from './limiter.contract.ts'
import { MemoryLimiter } from './memory-limiter.ts'

limiterContract('in-process', async () => {
  let nowMs = 1_700_000_000_000
  return {
    limiter: new MemoryLimiter(() => nowMs),
    advance: async (ms) => {
      nowMs += ms
    },
  }
})
