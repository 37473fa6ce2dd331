/** Assembles CustomResourceDefinition manifests from the kind definitions. */
import { GROUP, VERSION } from './v1alpha1/shared.ts'
import { commonStatus } from './v1alpha1/shared.ts'
import type { KindDefinition, PrinterColumn } from './v1alpha1/kind.ts'
import { toStructural, type JsonSchema } from './openapi.ts'

export const CATEGORY = 'gatehouse'

/** Columns every kind shows after its own. */
const COMMON_COLUMNS: PrinterColumn[] = [
  {
    name: 'Ready',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    description: 'Whether the resource is accepted and programmed into the gateways.',
  },
  {
    name: 'Reason',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
    description: 'Reason of the Ready condition.',
    priority: 1,
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since creation.' },
]

export interface CrdManifest {
  apiVersion: 'apiextensions.k8s.io/v1'
  kind: 'CustomResourceDefinition'
  metadata: { name: string; annotations?: Record<string, string> }
  spec: JsonSchema
}

export function openApiSchema(def: KindDefinition): JsonSchema {
  return {
    type: 'object',
    description: def.description,
    required: ['spec'],
    properties: {
      apiVersion: {
        type: 'string',
        description: `APIVersion defines the versioned schema of this representation of an object: ${GROUP}/${VERSION}.`,
      },
      kind: { type: 'string', description: `Kind is the type of this object: ${def.kind}.` },
      // The API server owns metadata's schema (ObjectMeta) and forbids describing it here.
      metadata: { type: 'object' },
      spec: toStructural(def.spec),
      status: toStructural(commonStatus),
    },
  }
}

export function crdManifest(def: KindDefinition): CrdManifest {
  const singular = def.kind.toLowerCase()
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular,
        shortNames: def.shortNames,
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: openApiSchema(def) },
          subresources: { status: {} },
          additionalPrinterColumns: [...def.printerColumns, ...COMMON_COLUMNS],
          ...(def.selectableFields ? { selectableFields: def.selectableFields.map((jsonPath) => ({ jsonPath })) } : {}),
        },
      ],
    },
  }
}
