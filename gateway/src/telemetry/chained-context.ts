/**
 * An OpenTelemetry `Context` that keeps each value as a link to the context it was set on, for the
 * contexts a traced request builds (the caller's propagated span and baggage, the server span, the
 * attempt span). The API's own context copies its whole map and makes three closures every time a
 * value is set; a request sets two to four, each on a context holding one to three values, so a
 * lookup that walks a short chain is cheaper than the copies (callgrind, test/bench/instructions.ts).
 *
 * Contexts are immutable either way: setting a value makes a new context and leaves its parent as
 * it was. A chain longer than MAX_CHAIN_LENGTH (a caller setting values in a loop) is folded into
 * one link per key, so a lookup never walks more than that.
 */
import type { Context } from '@opentelemetry/api'

const MAX_CHAIN_LENGTH = 32

/** Marks a key deleted; unlike `undefined`, a value no caller can set. */
const DELETED = Symbol('deleted')

export class ChainedContext implements Context {
  readonly #parent: ChainedContext | null
  readonly #key: symbol | null
  readonly #value: unknown
  readonly #length: number

  private constructor(parent: ChainedContext | null, key: symbol | null, value: unknown) {
    this.#parent = parent
    this.#key = key
    this.#value = value
    this.#length = parent === null ? 0 : parent.#length + 1
  }

  /** A context with no values: what `ROOT_CONTEXT` is to the API's contexts. */
  static readonly ROOT = new ChainedContext(null, null, undefined)

  getValue(key: symbol): unknown {
    if (this.#key === key) return this.#value === DELETED ? undefined : this.#value
    for (let link = this.#parent; link !== null; link = link.#parent) {
      if (link.#key === key) return link.#value === DELETED ? undefined : link.#value
    }
    return undefined
  }

  setValue(key: symbol, value: unknown): Context {
    return this.#link(key, value)
  }

  deleteValue(key: symbol): Context {
    return this.#link(key, DELETED)
  }

  #link(key: symbol, value: unknown): ChainedContext {
    if (this.#length < MAX_CHAIN_LENGTH) return new ChainedContext(this, key, value)
    // Newest first: the first value met for a key is the one the chain holds.
    const latest = new Map<symbol, unknown>([[key, value]])
    if (!latest.has(this.#key!)) latest.set(this.#key!, this.#value)
    for (let link = this.#parent; link !== null && link.#key !== null; link = link.#parent) {
      if (!latest.has(link.#key)) latest.set(link.#key, link.#value)
    }
    let folded = ChainedContext.ROOT
    for (const [name, held] of latest) if (held !== DELETED) folded = new ChainedContext(folded, name, held)
    return folded
  }
}
