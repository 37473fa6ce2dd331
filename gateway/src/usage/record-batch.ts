/**
 * One batch of serialised usage records, held as the UTF-8 bytes the ingest route receives (the
 * records joined by commas: what goes between `{"records":[` and `]}`), in fixed-size chunks off
 * the V8 heap. A record waits for its batch for hundreds of requests: held as a string it outlived
 * young-generation collections, was copied by each and then promoted, and the old generation's
 * growth paid for full collections (callgrind, test/bench/instructions.ts --variant metering, 1,500
 * requests: 150,000 instructions a request in the collector against 6,000 without metering).
 * Chunks go back to a small pool when the batch was delivered, so the bytes are not mapped afresh
 * for every batch either.
 */

const CHUNK_BYTES = 64 * 1024
/** Free chunks kept for the next batches (4 MiB): a 500-record batch of about 1.5 KB records takes 12. */
const MAX_POOLED_CHUNKS = 64
const pool: Buffer[] = []
const COMMA = 0x2c
/** A record's span: its chunk, its first byte, the byte after its last. */
const SPAN_FIELDS = 3
/** Spans a batch has room for before its span array grows (a batch is 500 records by default). */
const INITIAL_SPAN_RECORDS = 512

function takeChunk(minBytes: number): Buffer {
  if (minBytes > CHUNK_BYTES) return Buffer.allocUnsafeSlow(minBytes)
  return pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES)
}

/** What a usage transport delivers: the batch's records as framed bytes, or each as its JSON text. */
export interface UsageBatch {
  readonly count: number
  /** The records' UTF-8 bytes joined by commas, in parts, and how many bytes they make. */
  parts(): { parts: Buffer[]; bytes: number }
  /** Each record's JSON text (decoded from the bytes: for the spool and in-process stores). */
  lines(): string[]
}

export class RecordBatch implements UsageBatch {
  readonly #chunks: Buffer[] = []
  /** Bytes written into each chunk. */
  readonly #used: number[] = []
  /**
   * Per record: its chunk's index, and where its bytes start and end there (a record never spans
   * chunks). In a typed array, off the V8 heap like the bytes: a batch's array of 1,500 numbers,
   * grown as records came, outlived young-generation collections and was promoted.
   */
  #spans = new Uint32Array(SPAN_FIELDS * INITIAL_SPAN_RECORDS)
  #count = 0
  #bytes = 0
  #released = false

  /** A batch of records given as JSON texts (spooled or held ones being sent again). */
  static of(lines: readonly string[]): RecordBatch {
    const batch = new RecordBatch()
    for (const line of lines) batch.add(line)
    return batch
  }

  get count(): number {
    return this.#count
  }

  /**
   * Appends one record, given as its JSON text: one write of the whole text (flattened once) cost
   * 8,300 instructions a record where writing its pieces one by one cost 11,200 (callgrind).
   */
  add(line: string): void {
    // A comma before every record but the first: it belongs to the record's span, not its text.
    const comma = this.#count === 0 ? 0 : 1
    let last = this.#chunks.length - 1
    // UTF-8 takes at most 3 bytes a UTF-16 unit: a record that surely fits is not measured first.
    if (last < 0 || this.#chunks[last]!.length - this.#used[last]! < 3 * (line.length + comma)) {
      const bytes = comma + Buffer.byteLength(line)
      if (last < 0 || this.#chunks[last]!.length - this.#used[last]! < bytes) {
        this.#chunks.push(takeChunk(bytes))
        this.#used.push(0)
        last++
      }
    }
    const chunk = this.#chunks[last]!
    if (comma === 1) chunk[this.#used[last]!] = COMMA
    const start = this.#used[last]! + comma
    const end = start + chunk.write(line, start, 'utf8')
    if (this.#spans.length < SPAN_FIELDS * (this.#count + 1)) {
      const grown = new Uint32Array(this.#spans.length * 2)
      grown.set(this.#spans)
      this.#spans = grown
    }
    const at = SPAN_FIELDS * this.#count++
    this.#spans[at] = last
    this.#spans[at + 1] = start
    this.#spans[at + 2] = end
    this.#used[last] = end
    this.#bytes += end - start + comma
  }

  parts(): { parts: Buffer[]; bytes: number } {
    return { parts: this.#chunks.map((chunk, index) => chunk.subarray(0, this.#used[index])), bytes: this.#bytes }
  }

  lines(): string[] {
    const lines: string[] = []
    for (let index = 0; index < SPAN_FIELDS * this.#count; index += SPAN_FIELDS) {
      lines.push(this.#chunks[this.#spans[index]!]!.toString('utf8', this.#spans[index + 1], this.#spans[index + 2]))
    }
    return lines
  }

  /** The chunks go back to the pool: only once nothing reads their bytes any more (the batch was delivered). */
  release(): void {
    if (this.#released) return
    this.#released = true
    for (const chunk of this.#chunks) if (chunk.length === CHUNK_BYTES && pool.length < MAX_POOLED_CHUNKS) pool.push(chunk)
    this.#chunks.length = 0
    this.#used.length = 0
    this.#count = 0
    this.#bytes = 0
  }
}
