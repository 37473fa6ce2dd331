/** Feedback on requests by trace id (value -10..10, weight 0..1, metadata), joined to logs by trace. */
import { newId } from '../rows.ts'
import { jsonb, number, table, text, timestamp, type RecordOf } from '../table.ts'
import type { SqlExecutor } from '../sql.ts'

/** The `feedback` table; `FeedbackRecord` and every query below derive from it. */
export const feedbackTable = table('feedback', {
  id: text().generated(newId),
  organizationId: text().insert(),
  workspaceId: text().insert(),
  traceId: text().insert(),
  value: number().insert().patch(),
  weight: number().insert().patch(),
  metadata: jsonb<Record<string, unknown>>().insert().patch(),
  apiKeyId: text().nullable().insert(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type FeedbackRecord = RecordOf<typeof feedbackTable.fields>

export class FeedbackRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async create(input: { organizationId: string; workspaceId: string; traceId: string; value: number; weight: number; metadata: Record<string, unknown>; apiKeyId: string | null }): Promise<FeedbackRecord> {
    return feedbackTable.create(this.#db, input)
  }

  /** Updates feedback of one workspace; null when there is none with that id there. */
  async update(organizationId: string, workspaceId: string, id: string, change: { value: number; weight?: number | undefined; metadata?: Record<string, unknown> | undefined }): Promise<FeedbackRecord | null> {
    const set = feedbackTable.set(change, 4)
    const [row] = await this.#db.query(
      `UPDATE feedback SET ${set.sql} WHERE organization_id = $1 AND workspace_id = $2 AND id = $3 RETURNING ${feedbackTable.columns}`,
      [organizationId, workspaceId, id, ...set.params],
    )
    return row ? feedbackTable.toRecord(row) : null
  }
}
