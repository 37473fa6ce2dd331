/** Feedback on requests by trace id (value -10..10, weight 0..1, metadata), joined to logs by trace. */
import { isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'

export interface FeedbackRecord {
  id: string
  organizationId: string
  workspaceId: string
  traceId: string
  value: number
  weight: number
  metadata: Record<string, unknown>
  apiKeyId: string | null
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string
  trace_id: string
  value: number
  weight: number
  metadata: Record<string, unknown>
  api_key_id: string | null
  created_at: Date
  updated_at: Date
}

const toRecord = (row: Row): FeedbackRecord => ({
  id: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id, traceId: row.trace_id, value: row.value, weight: row.weight,
  metadata: row.metadata, apiKeyId: row.api_key_id, createdAt: isoRequired(row.created_at), updatedAt: isoRequired(row.updated_at),
})

export class FeedbackRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async create(input: { organizationId: string; workspaceId: string; traceId: string; value: number; weight: number; metadata: Record<string, unknown>; apiKeyId: string | null }): Promise<FeedbackRecord> {
    const [row] = await this.#db.query<Row>(
      `INSERT INTO feedback (id, organization_id, workspace_id, trace_id, value, weight, metadata, api_key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) RETURNING *`,
      [newId(), input.organizationId, input.workspaceId, input.traceId, input.value, input.weight, json(input.metadata), input.apiKeyId],
    )
    return toRecord(row!)
  }

  /** Updates feedback of one workspace; null when there is none with that id there. */
  async update(organizationId: string, workspaceId: string, id: string, change: { value: number; weight?: number | undefined; metadata?: Record<string, unknown> | undefined }): Promise<FeedbackRecord | null> {
    const [row] = await this.#db.query<Row>(
      `UPDATE feedback SET value = $4, weight = coalesce($5, weight), metadata = coalesce($6::jsonb, metadata), updated_at = now()
       WHERE organization_id = $1 AND workspace_id = $2 AND id = $3 RETURNING *`,
      [organizationId, workspaceId, id, change.value, change.weight ?? null, change.metadata === undefined ? null : json(change.metadata)],
    )
    return row ? toRecord(row) : null
  }
}
