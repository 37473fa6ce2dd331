/**
 * A CommonJS package loaded the first time it is used instead of when the importing module loads.
 * Every module a process loads stays resident (its source text and compiled code): packages only
 * some deployments use (Redis, WebSockets, JSON Schema, AWS signing) are loaded by those alone, so
 * an injected sidecar, whose budget is 80 MB idle, does not carry them. Synchronous, so call
 * sites keep their shape; `import type * as X from 'pkg'` gives the type.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

export function onDemand<T>(specifier: string): () => T {
  let loaded: T | undefined
  return () => (loaded ??= require(specifier) as T)
}
