/** What each kind file declares, and the full resource schema (apiVersion/kind/metadata/spec/status). */
import { z } from 'zod'
import { API_VERSION, commonStatus, objectMeta } from './shared.ts'

export interface PrinterColumn {
  name: string
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date'
  jsonPath: string
  description: string
  /** 1: shown only with `kubectl get -o wide`. */
  priority?: number
}

export interface KindDefinition<S extends z.ZodType = z.ZodType> {
  kind: string
  plural: string
  shortNames: string[]
  /** Top-level description: what `kubectl explain <kind>` prints first. */
  description: string
  spec: S
  /** Columns specific to the kind; Ready, Reason and Age are added to every kind. */
  printerColumns: PrinterColumn[]
  /** Spec fields usable in field selectors (`kubectl get --field-selector`). */
  selectableFields?: string[]
}

/** The whole object as users write it in YAML (status is optional and written by the operator). */
export function resourceSchema<const K extends string, S extends z.ZodType>(kind: K, spec: S) {
  return z.object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(kind),
    metadata: objectMeta,
    spec,
    status: commonStatus.optional(),
  })
}
