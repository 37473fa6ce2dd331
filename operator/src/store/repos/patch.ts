/**
 * Builds `SET col = $n` lists for partial updates. Column names come from a fixed map written in
 * the repository (never from the request); values are always bound parameters.
 */
import type { SqlExecutor } from '../sql.ts'

export type ColumnKind = 'value' | 'jsonb' | 'timestamptz'

export function setClause<P extends object>(
  patch: P,
  columns: { [K in keyof P]?: readonly [column: string, kind: ColumnKind] },
  firstParam: number,
): { sql: string; params: unknown[] } {
  const parts: string[] = []
  const params: unknown[] = []
  for (const [field, spec] of Object.entries(columns) as Array<[keyof P, readonly [string, ColumnKind]]>) {
    if (!(field in patch) || patch[field] === undefined) continue
    const value = patch[field]
    const [column, kind] = spec
    params.push(kind === 'jsonb' ? JSON.stringify(value) : value)
    const bound = `$${firstParam + params.length - 1}`
    parts.push(`${column} = ${kind === 'value' ? bound : `${bound}::${kind}`}`)
  }
  parts.push('updated_at = now()')
  return { sql: parts.join(', '), params }
}

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

/** Applies a `setClause` (built with `firstParam` 3) to one row of the organisation; the row after, if any. */
export async function updateRow<Row>(
  db: SqlExecutor,
  table: OrganizationTable,
  organizationId: string,
  id: string,
  set: { sql: string; params: unknown[] },
): Promise<Row | undefined> {
  const rows = await db.query<Row>(`UPDATE ${table} SET ${set.sql} WHERE organization_id = $1 AND id = $2 RETURNING *`, [organizationId, id, ...set.params])
  return rows[0]
}

/** Deletes one row of the organisation; whether it existed. */
export async function deleteRow(db: SqlExecutor, table: OrganizationTable, organizationId: string, id: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM ${table} WHERE organization_id = $1 AND id = $2 RETURNING id`, [organizationId, id])
  return rows.length > 0
}
