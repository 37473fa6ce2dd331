/**
 * Row updates and deletes addressed by (organization_id, id). The SET clause comes from the table's
 * definition (`Table.set`); table names come from definitions or the fixed list below, never from
 * input, and values are always bound parameters.
 */
import type { SqlExecutor } from '../sql.ts'
import type { Bound, Fields, RecordOf, Table } from '../table.ts'

/** Tables whose rows are addressed by (organization_id, id). A fixed list: table names are never input. */
export type OrganizationTable =
  | 'api_keys'
  | 'configs'
  | 'deployments'
  | 'guardrails'
  | 'integrations'
  | 'mcp_integrations'
  | 'mcp_servers'
  | 'agent_integrations'
  | 'agent_servers'
  | 'policies'
  | 'providers'
  | 'secret_references'
  | 'users'
  | 'workspaces'

/** Applies a SET clause (built with `firstParam` 3) to one row of the organisation; the record after, if any. */
export async function updateRow<F extends Fields>(
  db: SqlExecutor,
  table: Table<F>,
  organizationId: string,
  id: string,
  set: Bound,
): Promise<RecordOf<F> | undefined> {
  const rows = await db.query(`UPDATE ${table.name} SET ${set.sql} WHERE organization_id = $1 AND id = $2 RETURNING ${table.columns}`, [organizationId, id, ...set.params])
  return rows[0] ? table.toRecord(rows[0]) : undefined
}

/** Deletes one row of the organisation; whether it existed. */
export async function deleteRow(db: SqlExecutor, table: OrganizationTable, organizationId: string, id: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM ${table} WHERE organization_id = $1 AND id = $2 RETURNING id`, [organizationId, id])
  return rows.length > 0
}
