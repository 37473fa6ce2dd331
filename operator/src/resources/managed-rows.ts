/**
 * The admin-store rows one owner (the resources files, or Kubernetes) manages, by kind: what a
 * re-applied file set prunes when objects were removed from it, and the names that already exist
 * outside the files when their references are checked.
 */
import type { Repositories } from '../store/index.ts'
import type { ManagedBy } from '../store/repos/workspaces.ts'
import type { KnownNames } from './references.ts'

const ALL = 10_000

interface Row {
  id: string
  managedBy: ManagedBy
}

/** Deletion order: what refers to others goes first (a workspace's rows also go with it by cascade). */
async function rowsByKind(tx: Repositories, organizationId: string): Promise<Array<{ rows: Row[]; remove: (id: string) => Promise<boolean> }>> {
  return [
    { rows: (await tx.policies.list(organizationId, 'usage_limits', {}, 0, ALL)).data, remove: (id) => tx.policies.delete(organizationId, id) },
    { rows: (await tx.policies.list(organizationId, 'rate_limits', {}, 0, ALL)).data, remove: (id) => tx.policies.delete(organizationId, id) },
    { rows: (await tx.deployments.list(organizationId)).data, remove: (id) => tx.deployments.delete(organizationId, id) },
    { rows: (await tx.guardrails.list(organizationId, undefined, 0, ALL)).data, remove: (id) => tx.guardrails.delete(organizationId, id) },
    { rows: await tx.configs.list(organizationId), remove: (id) => tx.configs.delete(organizationId, id) },
    { rows: await tx.providers.list(organizationId), remove: (id) => tx.providers.delete(organizationId, id) },
    { rows: await tx.workspaces.listAll(organizationId), remove: (id) => tx.workspaces.delete(organizationId, id) },
  ]
}

/** Deletes the rows `managedBy` owns that are not in `keep`; returns how many went. */
export async function pruneManagedRows(tx: Repositories, organizationId: string, managedBy: Exclude<ManagedBy, null>, keep: ReadonlySet<string>): Promise<number> {
  let removed = 0
  for (const { rows, remove } of await rowsByKind(tx, organizationId)) {
    for (const row of rows) {
      if (row.managedBy === managedBy && !keep.has(row.id) && (await remove(row.id))) removed += 1
    }
  }
  return removed
}

/** Slugs of workspaces, configs and providers that some other owner than `managedBy` keeps. */
export async function namesOutside(store: Repositories, organizationId: string, managedBy: Exclude<ManagedBy, null>): Promise<KnownNames> {
  const others = <T extends { managedBy: ManagedBy; slug: string }>(rows: T[]): Set<string> =>
    new Set(rows.filter((row) => row.managedBy !== managedBy).map((row) => row.slug))
  return {
    workspaces: others(await store.workspaces.listAll(organizationId)),
    configs: others(await store.configs.list(organizationId)),
    providers: others(await store.providers.list(organizationId)),
  }
}
