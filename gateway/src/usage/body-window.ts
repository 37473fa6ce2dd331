/**
 * The start and the end of a relayed body, bounded: what a usage reader needs of an answer it does
 * not parse whole (an audio transcript's usage sits at its end, a verbose transcript's duration
 * near its start), without holding a long transcript or a stream of audio in memory. A body that
 * fits in both windows is kept whole.
 */
const DEFAULT_WINDOW_BYTES = 64 * 1024

export interface BodyText {
  /** The first bytes as text (the whole body when `whole`). */
  readonly head: string
  /** The last bytes as text (the whole body when `whole`). */
  readonly tail: string
  readonly whole: boolean
}

export class BodyWindow {
  readonly #windowBytes: number
  readonly #head: Buffer[] = []
  #headBytes = 0
  readonly #tail: Buffer[] = []
  #tailBytes = 0
  #dropped = false

  constructor(windowBytes = DEFAULT_WINDOW_BYTES) {
    this.#windowBytes = windowBytes
  }

  push(chunk: Uint8Array): void {
    let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.#headBytes < this.#windowBytes) {
      const taken = bytes.subarray(0, this.#windowBytes - this.#headBytes)
      // Copied: the relay may reuse the chunk's memory once it was written.
      this.#head.push(Buffer.from(taken))
      this.#headBytes += taken.length
      bytes = bytes.subarray(taken.length)
      if (bytes.length === 0) return
    }
    this.#tail.push(Buffer.from(bytes.subarray(Math.max(0, bytes.length - this.#windowBytes))))
    this.#tailBytes += Math.min(bytes.length, this.#windowBytes)
    if (bytes.length > this.#windowBytes) this.#dropped = true
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0]!.length >= this.#windowBytes) {
      this.#tailBytes -= this.#tail.shift()!.length
      this.#dropped = true
    }
  }

  text(): BodyText {
    const head = Buffer.concat(this.#head)
    const tail = Buffer.concat(this.#tail)
    if (!this.#dropped) {
      const whole = Buffer.concat([head, tail]).toString('utf8')
      return { head: whole, tail: whole, whole: true }
    }
    return { head: head.toString('utf8'), tail: tail.subarray(Math.max(0, tail.length - this.#windowBytes)).toString('utf8'), whole: false }
  }
}
