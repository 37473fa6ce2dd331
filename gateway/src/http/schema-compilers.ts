/**
 * Fastify's schema compilers, loaded when a route first declares a schema. Without this option
 * Fastify requires Ajv (with fast-uri and ajv-formats, about 90 modules) and fast-json-stringify's
 * compiler as it builds the server; the gateway's routes declare no schema (the pipeline parses
 * bodies itself), so those would only occupy memory, the 80 MB of an idle sidecar included. Same
 * compilers, same options: a route that declares a schema gets exactly what Fastify would build.
 */
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type ValidatorFactory = NonNullable<CompilersFactory['buildValidator']>
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>

// Fastify's own dependencies, resolved from where Fastify is installed.
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'))

/** `load()`'s function, loaded by the first call and called with its arguments. */
function loadedOnFirstCall<F extends (...args: never[]) => unknown>(load: () => F): F {
  let loaded: F | null = null
  return ((...args: Parameters<F>) => (loaded ??= load())(...args)) as F
}

/** A fresh pair per server, as Fastify makes (each keeps its own pool of compilers). */
export function lazySchemaCompilers(): CompilersFactory {
  return {
    buildValidator: loadedOnFirstCall(() => (fastifyRequire('@fastify/ajv-compiler') as () => ValidatorFactory)()),
    buildSerializer: loadedOnFirstCall(() => (fastifyRequire('@fastify/fast-json-stringify-compiler') as () => SerializerFactory)()),
  }
}
