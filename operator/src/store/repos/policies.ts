/**
 * Usage-limit (budget) and rate-limit policies: which requests (conditions), counted per what
 * (group_by), and the limit. Usage per value key lives in policy_usage, written by accounting.
 */
import { iso, isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type PolicyKind = 'usage_limits' | 'rate_limits'

export interface PolicyRecord {
  id: string
  organizationId: string
  workspaceId: string | null
  kind: PolicyKind
  name: string | null
  conditions: Array<{ key: string; value: string }>
  groupBy: Array<{ key: string }>
  type: 'requests' | 'tokens' | 'cost'
  unit: 'rpm' | 'rph' | 'rpd' | 'rpw' | null
  value: number | null
  creditLimit: number | null
  alertThreshold: number | null
  periodicReset: 'weekly' | 'monthly' | null
  periodicResetDays: number | null
  nextUsageResetAt: string | null
  lastResetAt: string | null
  status: 'active' | 'archived'
  /** Evaluate and report, never refuse. */
  shadow: boolean
  /** When the gateway's counter store is unreachable; null: the gateway's default for the limit. */
  failureMode: 'open' | 'closed' | null
  managedBy: ManagedBy
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string | null
  kind: PolicyKind
  name: string | null
  conditions: Array<{ key: string; value: string }>
  group_by: Array<{ key: string }>
  type: 'requests' | 'tokens' | 'cost'
  unit: PolicyRecord['unit']
  value: string | number | null
  credit_limit: string | number | null
  alert_threshold: string | number | null
  periodic_reset: 'weekly' | 'monthly' | null
  periodic_reset_days: number | null
  next_usage_reset_at: Date | null
  last_reset_at: Date | null
  status: 'active' | 'archived'
  shadow: boolean
  failure_mode: 'open' | 'closed' | null
  managed_by: ManagedBy
  created_at: Date
  updated_at: Date
}

/** numeric columns come back as strings from pg and as numbers from PGlite. */
const num = (value: string | number | null): number | null => (value === null ? null : Number(value))

function toRecord(row: Row): PolicyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    kind: row.kind,
    name: row.name,
    conditions: row.conditions,
    groupBy: row.group_by,
    type: row.type,
    unit: row.unit,
    value: num(row.value),
    creditLimit: num(row.credit_limit),
    alertThreshold: num(row.alert_threshold),
    periodicReset: row.periodic_reset,
    periodicResetDays: row.periodic_reset_days,
    nextUsageResetAt: iso(row.next_usage_reset_at),
    lastResetAt: iso(row.last_reset_at),
    status: row.status,
    shadow: row.shadow,
    failureMode: row.failure_mode,
    managedBy: row.managed_by,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

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
    const id = newId()
    const rows = await this.#db.query<Row>(
      `INSERT INTO policies (id, organization_id, workspace_id, kind, name, conditions, group_by, type, unit, value, credit_limit,
         alert_threshold, periodic_reset, periodic_reset_days, next_usage_reset_at, managed_by, shadow, failure_mode)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING *`,
      [id, input.organizationId, input.workspaceId, input.kind, input.name ?? null, json(input.conditions), json(input.groupBy), input.type,
        input.unit ?? null, input.value ?? null, input.creditLimit ?? null, input.alertThreshold ?? null, input.periodicReset ?? null,
        input.periodicResetDays ?? null, input.nextUsageResetAt ?? null, input.managedBy ?? null, input.shadow ?? false, input.failureMode ?? null],
    )
    this.#sink.add({ resource: 'policy', action: 'created', id })
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, kind: PolicyKind, id: string): Promise<PolicyRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM policies WHERE organization_id = $1 AND kind = $2 AND id = $3', [organizationId, kind, id])
    return rows[0] ? toRecord(rows[0]) : null
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
    const { total, rows } = await selectPage<Row>(this.#db, 'policies', where, page, pageSize)
    return { total, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: PolicyPatch): Promise<PolicyRecord | null> {
    const set = setClause(patch, {
      name: ['name', 'value'], conditions: ['conditions', 'jsonb'], groupBy: ['group_by', 'jsonb'], type: ['type', 'value'], unit: ['unit', 'value'],
      value: ['value', 'value'], creditLimit: ['credit_limit', 'value'], alertThreshold: ['alert_threshold', 'value'],
      periodicReset: ['periodic_reset', 'value'], periodicResetDays: ['periodic_reset_days', 'value'],
      nextUsageResetAt: ['next_usage_reset_at', 'timestamptz'], lastResetAt: ['last_reset_at', 'timestamptz'], status: ['status', 'value'],
      managedBy: ['managed_by', 'value'], shadow: ['shadow', 'value'], failureMode: ['failure_mode', 'value'],
    }, 3)
    const row = await updateRow<Row>(this.#db, 'policies', organizationId, id, set)
    if (!row) return null
    this.#sink.add({ resource: 'policy', action: 'updated', id })
    return toRecord(row)
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
