/**
 * The in-process response cache (embedded mode, one replica): per workspace, a map kept in
 * insertion order; over its byte cap the entries nearest expiry are evicted, expired ones first.
 */
import { DEFAULT_CACHE_LIMITS, type CacheLimits, type CachedAnswer, type ResponseCache, encodeEntry, decodeEntry } from './response-cache.ts'

interface Entry {
  text: string
  expiresAtMs: number
}

export class MemoryResponseCache implements ResponseCache {
  readonly #workspaces = new Map<string, { entries: Map<string, Entry>; bytes: number }>()
  readonly #limits: CacheLimits
  readonly #now: () => number

  constructor(limits: Partial<CacheLimits> = {}, now: () => number = Date.now) {
    this.#limits = { ...DEFAULT_CACHE_LIMITS, ...limits }
    this.#now = now
  }

  async get(workspaceId: string, key: string): Promise<CachedAnswer | null> {
    const space = this.#workspaces.get(workspaceId)
    const entry = space?.entries.get(key)
    if (!space || !entry) return null
    if (entry.expiresAtMs <= this.#now()) {
      this.#remove(space, key, entry)
      return null
    }
    return decodeEntry(entry.text)
  }

  async set(workspaceId: string, key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const text = encodeEntry(answer)
    if (text.length > this.#limits.maxEntryBytes) return
    let space = this.#workspaces.get(workspaceId)
    if (!space) {
      space = { entries: new Map(), bytes: 0 }
      this.#workspaces.set(workspaceId, space)
    }
    const previous = space.entries.get(key)
    if (previous) this.#remove(space, key, previous)
    space.entries.set(key, { text, expiresAtMs: this.#now() + ttlMs })
    space.bytes += text.length
    this.#evict(space)
  }

  #remove(space: { entries: Map<string, Entry>; bytes: number }, key: string, entry: Entry): void {
    space.entries.delete(key)
    space.bytes -= entry.text.length
  }

  #evict(space: { entries: Map<string, Entry>; bytes: number }): void {
    if (space.bytes <= this.#limits.maxBytesPerWorkspace) return
    const now = this.#now()
    for (const [key, entry] of space.entries) if (entry.expiresAtMs <= now) this.#remove(space, key, entry)
    if (space.bytes <= this.#limits.maxBytesPerWorkspace) return
    const byExpiry = [...space.entries].sort((a, b) => a[1].expiresAtMs - b[1].expiresAtMs)
    for (const [key, entry] of byExpiry) {
      if (space.bytes <= this.#limits.maxBytesPerWorkspace) break
      this.#remove(space, key, entry)
    }
  }

  async close(): Promise<void> {
    this.#workspaces.clear()
  }
}
