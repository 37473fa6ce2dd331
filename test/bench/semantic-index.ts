/**
 * The semantic cache's vector index with one workspace's entries in one partition (the worst case:
 * every entry is a candidate): build time, lookup time p50/p99 (the embedding call excluded), how
 * often the nearest stored vector is found, and memory.
 *
 *   node test/bench/semantic-index.ts [entries=100000] [dimensions=1536] [lookups=2000]
 *
 * Vectors are synthetic but shaped like embeddings: 1,000 topics (random unit directions), each
 * entry a topic plus its own noise, so neighbourhoods exist as they do for real text. Lookups are
 * stored entries perturbed a little (a near-duplicate question): recall@1 is how often the entry
 * it came from is the answer. Not a timed test: run it by hand (minutes on two busy cores).
 */
import { SemanticIndex } from '../../gateway/src/cache/semantic-index.ts'
import { percentile } from './histogram.ts'

const [entries = 100_000, dimensions = 1536, lookups = 2000] = process.argv.slice(2).map(Number)
const TOPICS = 1000

/** A deterministic generator (mulberry32), so runs compare. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const next = random(42)
const gaussian = (): number => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next())

function normalise(vector: Float32Array): Float32Array {
  let norm = 0
  for (const value of vector) norm += value * value
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! * scale
  return vector
}

function direction(): Float32Array {
  const vector = new Float32Array(dimensions)
  for (let i = 0; i < dimensions; i++) vector[i] = gaussian()
  return normalise(vector)
}

/** `base` plus noise of relative size `amount`, normalised. */
function near(base: Float32Array, amount: number): Float32Array {
  const noise = direction()
  const out = new Float32Array(dimensions)
  for (let i = 0; i < dimensions; i++) out[i] = base[i]! + amount * noise[i]!
  return normalise(out)
}

const topics = Array.from({ length: TOPICS }, direction)
const stored = new Float32Array(entries * dimensions)
for (let i = 0; i < entries; i++) stored.set(near(topics[i % TOPICS]!, 1.2), i * dimensions)
const entryVector = (i: number): Float32Array => stored.subarray(i * dimensions, (i + 1) * dimensions)

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`
global.gc?.()
const before = process.memoryUsage().rss
const index = new SemanticIndex({ maxEntriesPerWorkspace: entries })
const expiresAtMs = Date.now() + 3_600_000
const buildStart = performance.now()
const buildCpuStart = process.cpuUsage()
for (let i = 0; i < entries; i++) {
  index.add('ws', 'partition', `k${i}`, entryVector(i), expiresAtMs)
  if (i > 0 && i % 10_000 === 0) process.stderr.write(`  ${i} entries, ${((performance.now() - buildStart) / 1000).toFixed(0)} s\n`)
}
const buildS = (performance.now() - buildStart) / 1000
const buildCpu = process.cpuUsage(buildCpuStart)
global.gc?.()
const indexRss = process.memoryUsage().rss - before

const times: number[] = []
/** CPU time of each lookup (user + system): on a shared, busy machine wall time mostly measures the wait for a core. */
const cpuTimes: number[] = []
let found = 0
for (let q = 0; q < lookups; q++) {
  const target = Math.floor(next() * entries)
  const query = near(entryVector(target), 0.15)
  const cpuStart = process.cpuUsage()
  const start = performance.now()
  const match = index.search('ws', 'partition', query, 0.9)
  times.push(performance.now() - start)
  const cpu = process.cpuUsage(cpuStart)
  cpuTimes.push((cpu.user + cpu.system) / 1000)
  if (match?.key === `k${target}`) found++
}
times.sort((a, b) => a - b)
cpuTimes.sort((a, b) => a - b)
const result = {
  entries,
  dimensions,
  lookups,
  buildSeconds: Number(buildS.toFixed(1)),
  lookupMsP50: Number(percentile(times, 50).toFixed(3)),
  lookupMsP99: Number(percentile(times, 99).toFixed(3)),
  lookupMsMax: Number(times.at(-1)!.toFixed(3)),
  lookupCpuMsP50: Number(percentile(cpuTimes, 50).toFixed(3)),
  lookupCpuMsP99: Number(percentile(cpuTimes, 99).toFixed(3)),
  buildCpuSeconds: Number((buildCpu.user / 1e6).toFixed(1)),
  recallAt1: Number((found / lookups).toFixed(4)),
  indexRss: mib(indexRss),
  vectorsAsFloat32: mib(entries * dimensions * 4),
}
console.log(
  `semantic index: ${entries} entries x ${dimensions} dims: lookup p50 ${result.lookupMsP50} ms, p99 ${result.lookupMsP99} ms (CPU p50 ${result.lookupCpuMsP50} ms, p99 ${result.lookupCpuMsP99} ms), recall@1 ${result.recallAt1}, index memory ${result.indexRss} (build ${result.buildSeconds} s, ${result.buildCpuSeconds} s CPU)`,
)
console.log(JSON.stringify(result))
