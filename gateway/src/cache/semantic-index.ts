/**
 * The semantic cache's vector index, in this process: one HNSW graph (usearch) per partition, a
 * partition being one workspace and one exact filter (the route, the system prompt, the earlier
 * turns, the parameters, the embedding model). A lookup searches one partition's graph for the
 * nearest stored vectors by cosine similarity, so its cost grows with the logarithm of the
 * partition's size rather than linearly (brute force over 100,000 × 1536 floats takes about 100 ms
 * in JavaScript; the graph answers in a few milliseconds, see test/bench/semantic-index.ts).
 *
 * Vectors are stored as 16-bit floats (3 KiB per 1536-dimension vector instead of 6 KiB); the
 * similarity error that adds is about 1e-3, well under any useful threshold's margin. The index
 * holds pointers only (the cache key of the entry); the answers live in the response cache, which
 * owns expiry and the byte cap. Entries leave the index when they expire (checked at lookup and
 * swept), when the response cache no longer has them (found at lookup), or over the per-workspace
 * entry cap (those nearest expiry first).
 */
import { Index, MetricKind, ScalarKind } from 'usearch'

export interface SemanticIndexLimits {
  /** Entries one workspace keeps in this replica's index; over it, those nearest expiry are dropped. */
  maxEntriesPerWorkspace: number
  /** HNSW links per node (usearch `connectivity`): more is better recall and more memory. */
  connectivity: number
  /** Candidates kept while inserting and searching (usearch `expansion_add`/`expansion_search`). */
  expansionAdd: number
  expansionSearch: number
}

export const DEFAULT_SEMANTIC_INDEX_LIMITS: SemanticIndexLimits = { maxEntriesPerWorkspace: 200_000, connectivity: 16, expansionAdd: 64, expansionSearch: 64 }

/** Nearest candidates examined per lookup: the nearest may have expired or been evicted. */
const CANDIDATES_PER_LOOKUP = 8

export interface SemanticMatch {
  /** The response cache key of the stored answer. */
  readonly key: string
  /** Cosine similarity, -1 to 1. */
  readonly similarity: number
}

interface Slot {
  readonly key: string
  readonly partition: Partition
  readonly expiresAtMs: number
}

interface Partition {
  readonly name: string
  readonly index: Index
  readonly dimensions: number
  /** Entry keys to their numeric ids in `index`. */
  readonly ids: Map<string, bigint>
}

interface Workspace {
  readonly partitions: Map<string, Partition>
  readonly slots: Map<bigint, Slot>
}

export class SemanticIndex {
  readonly #workspaces = new Map<string, Workspace>()
  readonly #limits: SemanticIndexLimits
  readonly #now: () => number
  #nextId = 1n

  constructor(limits: Partial<SemanticIndexLimits> = {}, now: () => number = Date.now) {
    this.#limits = { ...DEFAULT_SEMANTIC_INDEX_LIMITS, ...limits }
    this.#now = now
  }

  /** Adds (or replaces) the entry `key` of a partition; a vector of another length than the partition's is ignored. */
  add(workspaceId: string, partitionName: string, key: string, vector: Float32Array, expiresAtMs: number): void {
    if (expiresAtMs <= this.#now() || vector.length === 0) return
    let workspace = this.#workspaces.get(workspaceId)
    if (!workspace) {
      workspace = { partitions: new Map(), slots: new Map() }
      this.#workspaces.set(workspaceId, workspace)
    }
    let partition = workspace.partitions.get(partitionName)
    if (!partition) {
      const index = new Index({
        dimensions: vector.length,
        metric: MetricKind.Cos,
        quantization: ScalarKind.F16,
        connectivity: this.#limits.connectivity,
        expansion_add: this.#limits.expansionAdd,
        expansion_search: this.#limits.expansionSearch,
        multi: false,
      })
      partition = { name: partitionName, index, dimensions: vector.length, ids: new Map() }
      workspace.partitions.set(partitionName, partition)
    }
    if (partition.dimensions !== vector.length) return
    const previous = partition.ids.get(key)
    if (previous !== undefined) this.#drop(workspace, previous)
    const id = this.#nextId++
    partition.index.add(id, vector)
    partition.ids.set(key, id)
    workspace.slots.set(id, { key, partition, expiresAtMs })
    if (workspace.slots.size > this.#limits.maxEntriesPerWorkspace) this.#shrink(workspace)
  }

  /** The most similar live entry of the partition at or above `minSimilarity`, or null. */
  search(workspaceId: string, partitionName: string, vector: Float32Array, minSimilarity: number): SemanticMatch | null {
    const workspace = this.#workspaces.get(workspaceId)
    const partition = workspace?.partitions.get(partitionName)
    if (!workspace || !partition || partition.dimensions !== vector.length || partition.ids.size === 0) return null
    const matches = partition.index.search(vector, Math.min(CANDIDATES_PER_LOOKUP, partition.ids.size), 1)
    const now = this.#now()
    for (let i = 0; i < matches.keys.length; i++) {
      const slot = workspace.slots.get(matches.keys[i]!)
      if (!slot) continue
      if (slot.expiresAtMs <= now) {
        this.#drop(workspace, matches.keys[i]!)
        continue
      }
      // usearch's cosine metric answers the distance, 1 - similarity.
      const similarity = 1 - matches.distances[i]!
      return similarity >= minSimilarity ? { key: slot.key, similarity } : null
    }
    return null
  }

  /** Forgets one entry (the response cache no longer has it). */
  remove(workspaceId: string, partitionName: string, key: string): void {
    const workspace = this.#workspaces.get(workspaceId)
    const id = workspace?.partitions.get(partitionName)?.ids.get(key)
    if (workspace && id !== undefined) this.#drop(workspace, id)
  }

  /** Drops every expired entry (and partitions left empty). */
  sweep(): void {
    for (const workspace of this.#workspaces.values()) this.#dropExpired(workspace)
  }

  contains(workspaceId: string, partitionName: string, key: string): boolean {
    return this.#workspaces.get(workspaceId)?.partitions.get(partitionName)?.ids.has(key) ?? false
  }

  hasWorkspace(workspaceId: string): boolean {
    return this.#workspaces.has(workspaceId)
  }

  /** Entries the workspace holds in this index. */
  size(workspaceId: string): number {
    return this.#workspaces.get(workspaceId)?.slots.size ?? 0
  }

  #drop(workspace: Workspace, id: bigint): void {
    const slot = workspace.slots.get(id)
    if (!slot) return
    workspace.slots.delete(id)
    slot.partition.ids.delete(slot.key)
    slot.partition.index.remove(id)
    if (slot.partition.ids.size === 0) workspace.partitions.delete(slot.partition.name)
  }

  /** Over the cap: expired entries go, then the 1 % nearest expiry (one pass per hundredth of the cap, not per insert). */
  #shrink(workspace: Workspace): void {
    this.#dropExpired(workspace)
    const excess = workspace.slots.size - this.#limits.maxEntriesPerWorkspace
    if (excess <= 0) return
    const count = Math.max(excess, Math.ceil(this.#limits.maxEntriesPerWorkspace / 100))
    const nearest = [...workspace.slots].sort((a, b) => a[1].expiresAtMs - b[1].expiresAtMs).slice(0, count)
    for (const [id] of nearest) this.#drop(workspace, id)
  }

  #dropExpired(workspace: Workspace): void {
    const now = this.#now()
    for (const [id, slot] of workspace.slots) if (slot.expiresAtMs <= now) this.#drop(workspace, id)
  }

  clear(): void {
    this.#workspaces.clear()
  }
}
