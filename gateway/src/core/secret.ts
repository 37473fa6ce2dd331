/**
 * A credential held in memory. It redacts itself everywhere a value can leak (string coercion,
 * JSON, util.inspect, pino) so that a stray log line or error body never carries it; code that
 * needs the value says so explicitly with `.reveal()`.
 */
import { inspect } from 'node:util'

const REDACTED = '[redacted]'

export class Secret {
  readonly #value: string
  constructor(value: string) {
    this.#value = value
  }
  reveal(): string {
    return this.#value
  }
  toString(): string {
    return REDACTED
  }
  toJSON(): string {
    return REDACTED
  }
  [inspect.custom](): string {
    return REDACTED
  }
}

export type SecretBag = Readonly<Record<string, Secret>>

export function secretBag(values: Readonly<Record<string, string>>): SecretBag {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, new Secret(value)]))
}
