/**
 * Usage-limit (budget) and rate-limit policies: which requests (conditions), counted per what
 * (group_by), and the limit. Usage per value key lives in policy_usage, written by accounting.
 */
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { boolean, jsonb, number, table, text, timestamp, type RecordOf } from '../table.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type PolicyKind = 'usage_limits' | 'rate_limits'

/** The `policies` table; `PolicyRecord` and every query below derive from it. */
export const policyTable = table('policies', {
  id: text().generated(newId),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  kind: text<PolicyKind>().insert(),
  name: text().nullable().insert().patch(),
  conditions: jsonb<Array<{ key: string; value: string }>>().insert().patch(),
  groupBy: jsonb<Array<{ key: string }>>().insert().patch(),
  type: text<'requests' | 'tokens' | 'cost'>().insert().patch(),
  unit: text<'rpm' | 'rph' | 'rpd' | 'rpw'>().nullable().insert().patch(),
  value: number().nullable().insert().patch(),
  creditLimit: number().nullable().insert().patch(),
  alertThreshold: number().nullable().insert().patch(),
  periodicReset: text<'weekly' | 'monthly'>().nullable().insert().patch(),
  periodicResetDays: number().nullable().insert().patch(),
  nextUsageResetAt: timestamp().nullable().insert().patch(),
  lastResetAt: timestamp().nullable().patch(),
  status: text<'active' | 'archived'>().patch(),
  /** Evaluate and report, never refuse. */
  shadow: boolean().insert(false).patch(),
  /** When the gateway's counter store is unreachable; null: the gateway's default for the limit. */
  failureMode: text<'open' | 'closed'>().nullable().insert().patch(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type PolicyRecord = RecordOf<typeof policyTable.fields>

export interface PolicyInput {
  organizationId: string
  workspaceId: string | null
  kind: PolicyKind
  name?: string | null
  conditions: Array<{ key: string; value: string }>
  groupBy: Array<{ key: string }>
  type: PolicyRecord['type']
  unit?: PolicyRecord['unit']
  value?: number | null
  creditLimit?: number | null
  alertThreshold?: number | null
  periodicReset?: PolicyRecord['periodicReset']
  periodicResetDays?: number | null
  nextUsageResetAt?: string | null
  shadow?: boolean
  failureMode?: 'open' | 'closed' | null
  managedBy?: ManagedBy
}

export type PolicyPatch = Partial<Pick<PolicyInput,
  'name' | 'conditions' | 'groupBy' | 'type' | 'unit' | 'value' | 'creditLimit' | 'alertThreshold' | 'periodicReset' | 'periodicResetDays' | 'nextUsageResetAt' | 'shadow' | 'failureMode' | 'managedBy'>> & {
  status?: 'active' | 'archived'
  lastResetAt?: string | null
}

export interface PolicyUsage {
  valueKey: string
  currentUsage: number
  status: 'active' | 'exhausted'
}

export class PolicyRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: PolicyInput): Promise<PolicyRecord> {
    const record = await policyTable.create(this.#db, input)
    this.#sink.add({ resource: 'policy', action: 'created', id: record.id })
    return record
  }

  async get(organizationId: string, kind: PolicyKind, id: string): Promise<PolicyRecord | null> {
    return policyTable.row(this.#db, 'WHERE organization_id = $1 AND kind = $2 AND id = $3', [organizationId, kind, id])
  }

  async list(
    organizationId: string,
    kind: PolicyKind,
    filter: { workspaceIds?: string[] | null; status?: 'active' | 'archived'; type?: string; unit?: string },
    page: number,
    pageSize: number,
  ): Promise<{ total: number; data: PolicyRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId).add('kind = ?', kind)
    if (filter.workspaceIds === null) where.add('workspace_id IS NULL')
    else if (filter.workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.workspaceIds))
    where.maybe('status = ?', filter.status)
    where.maybe('type = ?', filter.type)
    where.maybe('unit = ?', filter.unit)
    return selectPage(this.#db, policyTable, where, page, pageSize)
  }

  async update(organizationId: string, id: string, patch: PolicyPatch): Promise<PolicyRecord | null> {
    const record = await updateRow(this.#db, policyTable, organizationId, id, policyTable.set(patch, 3))
    if (!record) return null
    this.#sink.add({ resource: 'policy', action: 'updated', id })
    return record
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'policies', organizationId, id))) return false
    this.#sink.add({ resource: 'policy', action: 'deleted', id })
    return true
  }

  async usage(policyId: string): Promise<PolicyUsage[]> {
    const rows = await this.#db.query<{ value_key: string; current_usage: string | number; status: 'active' | 'exhausted' }>(
      'SELECT value_key, current_usage, status FROM policy_usage WHERE policy_id = $1 ORDER BY value_key', [policyId])
    return rows.map((row) => ({ valueKey: row.value_key, currentUsage: Number(row.current_usage), status: row.status }))
  }

  /** Starts a value key's usage afresh; false when nothing was tracked under it. */
  async resetUsage(policyId: string, valueKey: string): Promise<boolean> {
    const rows = await this.#db.query(
      "UPDATE policy_usage SET current_usage = 0, status = 'active', updated_at = now() WHERE policy_id = $1 AND value_key = $2 RETURNING value_key",
      [policyId, valueKey],
    )
    if (rows.length > 0) this.#sink.add({ resource: 'policy', action: 'updated', id: policyId })
    return rows.length > 0
  }
}
