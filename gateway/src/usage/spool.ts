/**
 * The on-disk buffer a gateway keeps usage batches in while the control plane is unreachable: one
 * file per batch (one record per line), oldest first by name. It is bounded by bytes: past the
 * bound the oldest batches lose their request and response bodies first (each record keeps its
 * counts and is marked `bodiesDropped`); counts are never dropped, so a spool whose batches are all
 * lean may exceed the bound, and `overBound` says so.
 */
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface SpoolStats {
  segments: number
  bytes: number
  /** Records whose bodies were shed to stay under the bound (since start). */
  bodiesDropped: number
  overBound: boolean
  /** The bound the spool sheds bodies to stay under. */
  maxBytes: number
}

const SEGMENT = /^(\d{16})-(\d{6})(\.lean)?\.jsonl$/

export class UsageSpool {
  readonly #dir: string
  readonly #maxBytes: number
  #bytes = 0
  #segments: string[] = []
  #sequence = 0
  #bodiesDropped = 0
  #opened = false

  constructor(dir: string, maxBytes: number) {
    this.#dir = dir
    this.#maxBytes = maxBytes
  }

  /** Reads what an earlier process left behind. */
  async open(): Promise<void> {
    if (this.#opened) return
    await mkdir(this.#dir, { recursive: true, mode: 0o700 })
    const names = (await readdir(this.#dir)).filter((name) => SEGMENT.test(name)).sort()
    let bytes = 0
    for (const name of names) bytes += (await stat(join(this.#dir, name))).size
    this.#segments = names
    this.#bytes = bytes
    this.#opened = true
  }

  stats(): SpoolStats {
    return { segments: this.#segments.length, bytes: this.#bytes, bodiesDropped: this.#bodiesDropped, overBound: this.#bytes > this.#maxBytes, maxBytes: this.#maxBytes }
  }

  get empty(): boolean {
    return this.#segments.length === 0
  }

  /** Appends one batch (serialised records, one per line), then sheds bodies while over the bound. */
  async append(lines: readonly string[]): Promise<void> {
    await this.open()
    const name = `${String(Date.now()).padStart(16, '0')}-${String(this.#sequence++ % 1_000_000).padStart(6, '0')}.jsonl`
    const text = `${lines.join('\n')}\n`
    await writeFile(join(this.#dir, name), text, { mode: 0o600 })
    this.#segments.push(name)
    this.#bytes += Buffer.byteLength(text)
    await this.#shed()
  }

  /** The oldest batch, without removing it. */
  async oldest(): Promise<{ name: string; lines: string[] } | null> {
    await this.open()
    for (;;) {
      const name = this.#segments[0]
      if (name === undefined) return null
      const text = await readFile(join(this.#dir, name), 'utf8').catch(() => null)
      if (text !== null) return { name, lines: text.split('\n').filter((line) => line.length > 0) }
      // Removed behind our back (an operator cleaning up): forget it.
      this.#segments.shift()
    }
  }

  /** Removes a batch once the control plane stored it. */
  async remove(name: string): Promise<void> {
    const index = this.#segments.indexOf(name)
    if (index < 0) return
    const path = join(this.#dir, name)
    const size = (await stat(path).catch(() => ({ size: 0 }))).size
    await unlink(path).catch(() => undefined)
    this.#segments.splice(index, 1)
    this.#bytes -= size
  }

  async #shed(): Promise<void> {
    for (let index = 0; index < this.#segments.length && this.#bytes > this.#maxBytes; index++) {
      const name = this.#segments[index]!
      if (name.endsWith('.lean.jsonl')) continue
      const path = join(this.#dir, name)
      const before = (await stat(path)).size
      const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line.length > 0)
      const lean = lines.map((line) => {
        const record = JSON.parse(line) as Record<string, unknown>
        if (record.requestBody == null && record.responseBody == null) return line
        record.requestBody = null
        record.responseBody = null
        record.bodiesDropped = true
        this.#bodiesDropped++
        return JSON.stringify(record)
      })
      const leanName = name.replace(/\.jsonl$/, '.lean.jsonl')
      const text = `${lean.join('\n')}\n`
      // Write-then-rename: a crash leaves the old batch or both (the ingest route stores a record id once).
      await writeFile(join(this.#dir, `${leanName}.tmp`), text, { mode: 0o600 })
      await rename(join(this.#dir, `${leanName}.tmp`), join(this.#dir, leanName))
      await unlink(path)
      this.#segments[index] = leanName
      this.#bytes += Buffer.byteLength(text) - before
    }
  }
}
