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
    const value = ChainedContext.#find(this, key)
    return value === DELETED ? undefined : value
  }

  setValue(key: symbol, value: unknown): Context {
    return this.#link(key, value)
  }

  deleteValue(key: symbol): Context {
    return this.#link(key, DELETED)
  }

  /** The newest value `key` has from `from` back to the root (DELETED included); undefined if never set. */
  static #find(from: ChainedContext, key: symbol): unknown {
    for (let link: ChainedContext | null = from; link !== null; link = link.#parent) {
      if (link.#key === key) return link.#value
    }
    return undefined
  }

  #link(key: symbol, value: unknown): ChainedContext {
    return this.#length < MAX_CHAIN_LENGTH ? new ChainedContext(this, key, value) : ChainedContext.#fold(this, key, value)
  }

  /** `from` with `key` set, as one link per key holding the value the chain has for it; deleted keys are left out. */
  static #fold(from: ChainedContext, key: symbol, value: unknown): ChainedContext {
    const keys = new Set<symbol>([key])
    for (let link = from; link.#key !== null; link = link.#parent!) keys.add(link.#key)
    let folded = ChainedContext.ROOT
    for (const name of keys) {
      const held = name === key ? value : ChainedContext.#find(from, name)
      if (held !== DELETED) folded = new ChainedContext(folded, name, held)
    }
    return folded
  }
}
