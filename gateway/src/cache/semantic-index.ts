/**
 * The semantic cache's vector index, in this process: one HNSW graph (usearch) per partition, a
 * partition being one workspace and one exact filter (the route, the system prompt, the earlier
 * turns, the parameters, the embedding model). A lookup searches one partition's graph for the
 * nearest stored vectors by cosine similarity, so its cost grows with the logarithm of the
 * partition's size rather than linearly (brute force over 100,000 × 1536 floats takes about 100 ms
 * in JavaScript; the graph answers in a few milliseconds, see test/bench/semantic-index.ts).
 *
 * A small partition (most are: every multi-turn conversation state is a partition of its own) is
 * searched exactly over its vectors instead, since an HNSW graph costs about 54 KiB even for one
 * entry; it becomes a graph once it holds more than `FLAT_PARTITION_LIMIT` entries.
 *
 * Graph vectors are stored as 16-bit floats (3 KiB per 1536-dimension vector instead of 6 KiB); the
 * similarity error that adds is about 1e-3, well under any useful threshold's margin. The index
 * holds pointers only (the cache key of the entry); the answers live in the response cache, which
 * owns expiry and the byte cap. Entries leave the index when they expire (checked at lookup and
 * swept), when the response cache no longer has them (found at lookup), or over the per-workspace
 * entry cap (those nearest expiry first).
 */
import { createRequire } from 'node:module'
import type * as UsearchModule from 'usearch'
import type { Index } from 'usearch'

type Usearch = typeof UsearchModule
let usearch: Usearch | null = null
/** The native module (about 10 MiB) loads with the first graph: gateways that never need one pay nothing at start. */
function loadUsearch(): Usearch {
  usearch ??= createRequire(import.meta.url)('usearch') as Usearch
  return usearch
}

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
/** Up to this many entries a partition is searched exactly (256 × 1536 multiply-adds: well under a millisecond). */
export const FLAT_PARTITION_LIMIT = 256

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
  readonly dimensions: number
  /** Entry keys to their numeric ids (in `graph` or `flat`). */
  readonly ids: Map<string, bigint>
  /** Small partitions: unit vectors by id, searched exactly. */
  flat: Map<bigint, Float32Array> | null
  /** Large partitions: the HNSW graph. */
  graph: Index | null
}

function unit(vector: Float32Array): Float32Array | null {
  let norm = 0
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!
  if (norm === 0) return null
  const scale = 1 / Math.sqrt(norm)
  return vector.map((value) => value * scale)
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
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
      partition = { name: partitionName, dimensions: vector.length, ids: new Map(), flat: new Map(), graph: null }
      workspace.partitions.set(partitionName, partition)
    }
    const direction = unit(vector)
    if (partition.dimensions !== vector.length || direction === null) return
    const previous = partition.ids.get(key)
    if (previous !== undefined) this.#drop(workspace, previous)
    const id = this.#nextId++
    if (partition.flat !== null) {
      partition.flat.set(id, direction)
      if (partition.flat.size > FLAT_PARTITION_LIMIT) this.#toGraph(partition)
    } else {
      partition.graph!.add(id, direction)
    }
    partition.ids.set(key, id)
    workspace.slots.set(id, { key, partition, expiresAtMs })
    if (workspace.slots.size > this.#limits.maxEntriesPerWorkspace) this.#shrink(workspace)
  }

  /** The most similar live entry of the partition at or above `minSimilarity`, or null. */
  search(workspaceId: string, partitionName: string, vector: Float32Array, minSimilarity: number): SemanticMatch | null {
    const workspace = this.#workspaces.get(workspaceId)
    const partition = workspace?.partitions.get(partitionName)
    if (!workspace || !partition || partition.dimensions !== vector.length || partition.ids.size === 0) return null
    const direction = unit(vector)
    if (direction === null) return null
    const now = this.#now()
    for (const candidate of this.#nearest(partition, direction)) {
      const slot = workspace.slots.get(candidate.id)
      if (!slot) continue
      if (slot.expiresAtMs <= now) {
        this.#drop(workspace, candidate.id)
        continue
      }
      return candidate.similarity >= minSimilarity ? { key: slot.key, similarity: candidate.similarity } : null
    }
    return null
  }

  /** The nearest candidates of a partition, nearest first. */
  #nearest(partition: Partition, direction: Float32Array): Array<{ id: bigint; similarity: number }> {
    if (partition.flat !== null) {
      const all = [...partition.flat].map(([id, stored]) => ({ id, similarity: dot(stored, direction) }))
      return all.sort((a, b) => b.similarity - a.similarity).slice(0, CANDIDATES_PER_LOOKUP)
    }
    const matches = partition.graph!.search(direction, Math.min(CANDIDATES_PER_LOOKUP, partition.ids.size), 1)
    // usearch's cosine metric answers the distance, 1 - similarity.
    return Array.from(matches.keys, (id, i) => ({ id, similarity: 1 - matches.distances[i]! }))
  }

  /** A partition grown past the flat limit moves its vectors into an HNSW graph. */
  #toGraph(partition: Partition): void {
    const { Index: Graph, MetricKind, ScalarKind } = loadUsearch()
    const graph = new Graph({
      dimensions: partition.dimensions,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F16,
      connectivity: this.#limits.connectivity,
      expansion_add: this.#limits.expansionAdd,
      expansion_search: this.#limits.expansionSearch,
      multi: false,
    })
    for (const [id, direction] of partition.flat!) graph.add(id, direction)
    partition.graph = graph
    partition.flat = null
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
    if (slot.partition.flat !== null) slot.partition.flat.delete(id)
    else slot.partition.graph!.remove(id)
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
