/**
 * Gemini's `Schema` is a subset of OpenAPI 3.0, not JSON Schema: it rejects keywords such as
 * `additionalProperties` or `$schema` with a 400. Tool parameters and response schemas are
 * rewritten to the subset: unknown keywords dropped, local `$ref`s inlined, `const` as a one-value
 * enum, and `type: [X, "null"]` as `nullable`.
 */
import { isRecord } from '../shared/errors.ts'

const keptKeywords = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
])

// Bounds recursion through self-referencing `$ref`s; deeper levels become an untyped object.
const maxRefDepth = 8

type Definitions = Readonly<Record<string, unknown>>

function resolveRef(ref: string, definitions: Definitions): unknown {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)
  return match?.[1] === undefined ? undefined : definitions[match[1]]
}

function convert(node: unknown, definitions: Definitions, refDepth: number): unknown {
  if (!isRecord(node)) return node
  if (typeof node.$ref === 'string') {
    const target = refDepth < maxRefDepth ? resolveRef(node.$ref, definitions) : undefined
    return target === undefined ? { type: 'object' } : convert(target, definitions, refDepth + 1)
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (!keptKeywords.has(key)) continue
    if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, convert(child, definitions, refDepth)]))
    } else if (key === 'items') {
      out.items = convert(value, definitions, refDepth)
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map((child) => convert(child, definitions, refDepth))
    } else {
      out[key] = value
    }
  }
  if ('const' in node) out.enum = [node.const]
  if (Array.isArray(node.type)) {
    const types = node.type.filter((type) => type !== 'null')
    if (types.length < node.type.length) out.nullable = true
    if (types.length === 1) out.type = types[0]
    else delete out.type
  }
  return out
}

export function toGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const definitions = { ...(isRecord(schema.definitions) ? schema.definitions : {}), ...(isRecord(schema.$defs) ? schema.$defs : {}) }
  return convert(schema, definitions, 0) as Record<string, unknown>
}
