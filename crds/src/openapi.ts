/**
 * zod schema -> structural Kubernetes OpenAPI v3 schema.
 *
 * z.toJSONSchema gives JSON Schema in the OpenAPI 3.0 dialect; Kubernetes accepts a stricter
 * subset ("structural": every node typed, no $ref, no anyOf/oneOf/allOf/not, no `const`,
 * `additionalProperties` never next to `properties`). This walk rewrites what has a structural
 * equivalent and throws on anything else, so a schema that cannot be a CRD fails generation
 * instead of being silently loosened.
 */
import { z } from 'zod'

export type JsonSchema = { [key: string]: unknown }

/** Keywords a CRD schema may carry (apiextensions.k8s.io/v1 JSONSchemaProps, minus the non-structural ones). */
const ALLOWED = new Set([
  'type',
  'format',
  'description',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
])

/** Formats the API server validates; others would only log a warning, so they are dropped. */
const K8S_FORMATS = new Set(['date-time', 'uri', 'email', 'uuid', 'hostname', 'ipv4', 'ipv6', 'byte', 'int32', 'int64', 'double', 'float'])

export function toStructural(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
    reused: 'inline',
    cycles: 'throw',
  }) as JsonSchema
  delete json.$schema
  return rewrite(json, '')
}

function rewrite(node: JsonSchema, path: string): JsonSchema {
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case 'const':
        out.enum = [value]
        break
      case 'properties': {
        const props: JsonSchema = {}
        for (const [name, child] of Object.entries(value as Record<string, JsonSchema>)) {
          props[name] = rewrite(child, `${path}.${name}`)
        }
        out.properties = props
        break
      }
      case 'items':
        if (Array.isArray(value)) throw new Error(`${path}: tuple schemas are not structural`)
        out.items = rewrite(value as JsonSchema, `${path}[]`)
        break
      case 'additionalProperties':
        // `false` comes from strict objects: Kubernetes prunes (and strict field validation
        // rejects) unknown fields anyway, and false is not allowed in a CRD.
        if (value === false || node.properties !== undefined) break
        if (node['x-kubernetes-preserve-unknown-fields'] === true) break
        if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
          out.additionalProperties = rewrite(value as JsonSchema, `${path}{}`)
        } else {
          throw new Error(`${path}: map without a typed value schema; use freeForm() for free-form objects`)
        }
        break
      case 'propertyNames':
        // Map keys are strings in Kubernetes; their own bounds are enforced by zod only.
        break
      case 'format':
        if (K8S_FORMATS.has(value as string)) out.format = value
        break
      case 'pattern':
        // zod's date-time pattern uses lookarounds RE2 lacks; the date-time format already checks it.
        if (node.format !== 'date-time') out.pattern = value
        break
      default:
        if (!ALLOWED.has(key)) throw new Error(`${path || '<root>'}: keyword "${key}" is not allowed in a structural schema`)
        out[key] = value
    }
  }
  if (out.type === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    throw new Error(`${path || '<root>'}: every node needs a type`)
  }
  return out
}
