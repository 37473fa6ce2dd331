/**
 * Counters and histograms for the metrics fed on every exchange, exposed through a prom-client
 * `Registry` exactly as prom-client's own `Counter` and `Histogram` expose them (same values, same
 * label order, same series order), but updated by label values in the metric's label order:
 *
 *   requests.inc(['chat', 'default', 'openai', 'gpt-4o', '2xx'])
 *
 * Why not prom-client's: each of its `inc`/`observe` calls builds a key string from the label
 * object, checks every label name, and looks the key up as a property of a dictionary object (a
 * fresh string each time, so V8 hashes it and searches its string table), and a histogram bucket is
 * found the same way by the number as a string. With about a dozen updates per exchange, that was
 * 10 % of the plain gateway's instructions per request (callgrind, test/bench/instructions.ts).
 * Here a series is found with one `Map` lookup per label, and a histogram's buckets are an array.
 */
import type { Metric, Registry } from 'prom-client'

interface SeriesConfig<Names extends readonly string[]> {
  readonly name: string
  readonly help: string
  readonly labelNames: Names
  readonly registers: readonly Registry[]
}

/** What the registry reads of a metric (prom-client's `get()` and `getForPromString()` shape). */
interface Exposition<Value> {
  readonly name: string
  readonly help: string
  readonly type: 'counter' | 'histogram'
  readonly aggregator: 'sum'
  readonly values: Value[]
}

interface ExposedValue {
  readonly value: number
  readonly labels: Readonly<Record<string, string | number>>
  readonly metricName?: string
  /** prom-client's buckets carry one (null without exemplars); `getMetricsAsJSON` shows it. */
  readonly exemplar?: null
}

/** A bucket, sum or count line: its own labels (`le`), the series' labels, and its name. */
interface ExposedBucket extends ExposedValue {
  readonly metricName: string
  readonly sharedLabels: Readonly<Record<string, string>>
}

function register(metric: object, registries: readonly Registry[]): void {
  // The registry only reads `name`, `get()`/`getForPromString()` and `reset()` of what it holds.
  for (const registry of registries) registry.registerMetric(metric as Metric)
}

/** One value per label name, in the metric's label order. */
export type LabelValues<Names extends readonly string[]> = { readonly [Index in keyof Names]: string }

/** A label set's series, found through one nested `Map` per label; kept in creation order for exposition. */
class SeriesTable<Entry> {
  readonly #root = new Map<string, unknown>()
  readonly #depth: number
  readonly #create: (labels: Record<string, string>) => Entry
  readonly #labelNames: readonly string[]
  readonly entries: Entry[] = []

  constructor(labelNames: readonly string[], create: (labels: Record<string, string>) => Entry) {
    this.#labelNames = labelNames
    this.#depth = labelNames.length
    this.#create = create
  }

  get(values: readonly string[]): Entry {
    if (values.length !== this.#depth) throw new Error(`Expected ${this.#depth} label values, got ${values.length}`)
    let level = this.#root
    const last = this.#depth - 1
    for (let index = 0; index < last; index++) {
      const value = values[index]!
      let next = level.get(value) as Map<string, unknown> | undefined
      if (next === undefined) {
        next = new Map()
        level.set(value, next)
      }
      level = next
    }
    const key = this.#depth === 0 ? '' : values[last]!
    let entry = level.get(key) as Entry | undefined
    if (entry === undefined) {
      entry = this.#create(this.#labelObject(values))
      level.set(key, entry)
      this.entries.push(entry)
    }
    return entry
  }

  clear(): void {
    this.#root.clear()
    this.entries.length = 0
  }

  #labelObject(values: readonly string[]): Record<string, string> {
    const labels: Record<string, string> = {}
    for (let index = 0; index < this.#depth; index++) labels[this.#labelNames[index]!] = values[index]!
    return labels
  }
}

function checkedAmount(value: number): number {
  if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
  return value
}

interface CounterSeries {
  readonly labels: Record<string, string>
  value: number
}

/** What both kinds share: the registry's view (name, help, type, aggregator), the label names and the series table. */
abstract class SeriesMetric<Names extends readonly string[], Entry> {
  readonly name: string
  readonly help: string
  abstract readonly type: 'counter' | 'histogram'
  readonly aggregator = 'sum' as const
  readonly labelNames: Names
  protected readonly series: SeriesTable<Entry>

  constructor(config: SeriesConfig<Names>, create: (labels: Record<string, string>) => Entry) {
    this.name = config.name
    this.help = config.help
    this.labelNames = config.labelNames
    this.series = new SeriesTable(config.labelNames, create)
    register(this, config.registers)
  }

  reset(): void {
    this.series.clear()
  }
}

/** A monotonic counter (prom-client `Counter`'s exposition). */
export class SeriesCounter<const Names extends readonly string[]> extends SeriesMetric<Names, CounterSeries> {
  readonly type = 'counter' as const

  constructor(config: SeriesConfig<Names>) {
    super(config, (labels) => ({ labels, value: 0 }))
  }

  inc(values: LabelValues<Names>, amount = 1): void {
    if (checkedAmount(amount) < 0) throw new Error('It is not possible to decrease a counter')
    this.series.get(values).value += amount
  }

  get(): Promise<Exposition<ExposedValue>> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.series.entries.map(({ labels, value }) => ({ value, labels })),
    })
  }
}

interface HistogramSeries {
  readonly labels: Record<string, string>
  /** Observations per bucket (not cumulative); one past the last bound holds none: those count in `+Inf` only. */
  readonly counts: number[]
  sum: number
  count: number
}

/** A histogram with fixed upper bounds (prom-client `Histogram`'s exposition). */
export class SeriesHistogram<const Names extends readonly string[]> extends SeriesMetric<Names, HistogramSeries> {
  readonly type = 'histogram' as const
  readonly #bounds: readonly number[]

  constructor(config: SeriesConfig<Names> & { readonly buckets: readonly number[] }) {
    // Ascending, as prom-client takes them (it does not sort either).
    const bounds = [...config.buckets]
    super(config, (labels) => ({ labels, counts: bounds.map(() => 0), sum: 0, count: 0 }))
    this.#bounds = bounds
  }

  observe(values: LabelValues<Names>, value: number): void {
    checkedAmount(value)
    const series = this.series.get(values)
    const bounds = this.#bounds
    let bucket = 0
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++
    if (bucket < bounds.length) series.counts[bucket]! += 1
    series.sum += value
    series.count += 1
  }

  /** What the registry formats: buckets with the series' labels shared, then `+Inf`, `_sum`, `_count`. */
  getForPromString(): Promise<Exposition<ExposedBucket>> {
    const bucketName = `${this.name}_bucket`
    const values: ExposedBucket[] = []
    for (const series of this.series.entries) {
      let cumulative = 0
      this.#bounds.forEach((bound, index) => {
        cumulative += series.counts[index]!
        values.push({ labels: { le: bound }, sharedLabels: series.labels, value: cumulative, metricName: bucketName, exemplar: null })
      })
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` },
      )
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values })
  }

  /** As JSON (`Registry.getMetricsAsJSON`): each value's labels hold the series' labels and its own. */
  async get(): Promise<Exposition<ExposedValue>> {
    const data = await this.getForPromString()
    return { ...data, values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) }
  }
}
