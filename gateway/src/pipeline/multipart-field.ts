/**
 * Reads a short text field (the `model` of an audio upload) out of a multipart/form-data body
 * as it streams through to the provider, without holding the body: each chunk is searched with a
 * native byte search for the field's part header, and only the bytes from a header split across
 * two chunks are carried over. A file part is never decoded. The field may come before or after
 * the file (clients order fields as they like).
 */
import { Transform, type Readable, pipeline } from 'node:stream'

const HEADER_END = Buffer.from('\r\n\r\n')
const VALUE_END = Buffer.from('\r\n')
/** Longest part header (plus value) kept across a chunk boundary; longer ones are not a short text field. */
const MAX_CARRY_BYTES = 2048
const MAX_VALUE_BYTES = 512

export class MultipartFieldScanner {
  readonly #header: Buffer
  #carry: Buffer = Buffer.alloc(0)
  #value: string | null = null

  constructor(name: string) {
    this.#header = Buffer.from(`form-data; name="${name}"`)
  }

  /** The field's value once seen; null before, or when the body has none. */
  get value(): string | null {
    return this.#value
  }

  observe(chunk: Uint8Array): void {
    if (this.#value !== null) return
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const data = this.#carry.length > 0 ? Buffer.concat([this.#carry, bytes]) : bytes
    const at = data.indexOf(this.#header)
    if (at === -1) {
      // The header may begin in this chunk's last bytes.
      this.#carry = Buffer.from(data.subarray(Math.max(0, data.length - this.#header.length)))
      return
    }
    const headerEnd = data.indexOf(HEADER_END, at)
    const valueEnd = headerEnd === -1 ? -1 : data.indexOf(VALUE_END, headerEnd + HEADER_END.length)
    if (valueEnd === -1) {
      const rest = data.subarray(at)
      this.#carry = rest.length <= MAX_CARRY_BYTES ? Buffer.from(rest) : Buffer.alloc(0)
      return
    }
    const value = data.subarray(headerEnd + HEADER_END.length, valueEnd)
    this.#carry = Buffer.alloc(0)
    if (value.length <= MAX_VALUE_BYTES) this.#value = value.toString('utf8')
  }
}

/** `upload` as it flows on, each chunk shown to every scanner on the way; backpressure and errors pass through. */
export function scannedUpload(upload: Readable, scanners: readonly MultipartFieldScanner[]): Readable {
  const observer = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (const scanner of scanners) scanner.observe(chunk)
      done(null, chunk)
    },
  })
  return pipeline(upload, observer, () => undefined)
}
