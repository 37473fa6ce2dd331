/** The gatehouse.dev kinds as API resources, from the same definitions the CRDs are generated from. */
import { GROUP, VERSION, kindDefinitions, type GatehouseKind } from '@gatehouse/crds'
import type { ResourceType } from '../kube/client.ts'

export const FINALIZER = `${GROUP}/cleanup`

export const RESOURCE_TYPES: ReadonlyMap<GatehouseKind, ResourceType> = new Map(
  kindDefinitions.map((definition) => [definition.kind as GatehouseKind, { group: GROUP, version: VERSION, plural: definition.plural, kind: definition.kind }]),
)

export function resourceType(kind: GatehouseKind): ResourceType {
  const type = RESOURCE_TYPES.get(kind)
  if (!type) throw new Error(`unknown kind ${kind}`)
  return type
}

/** Work-queue key of one object: `Kind/namespace/name`. */
export function workKey(kind: GatehouseKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`
}

export function parseWorkKey(key: string): { kind: GatehouseKind; namespace: string; name: string } {
  const [kind, namespace, ...rest] = key.split('/')
  return { kind: kind as GatehouseKind, namespace: namespace!, name: rest.join('/') }
}
