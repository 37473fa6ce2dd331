/**
 * Model price overrides, versioned: every change writes a new version of its (workspace, provider,
 * model) entry; a deletion is a version too. The newest version of each entry that is not a
 * deletion is what the compiler puts into `snapshot.prices`. Prices are USD per unit (per text or
 * audio token, per image, per second of audio).
 */
import { newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { boolean, number, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'

/** The `model_prices` table: every version of every price entry (a deletion is a version too). */
export const modelPriceTable = table('model_prices', {
  id: text().generated(newId),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  provider: text().insert(),
  model: text().insert(),
  /** The next version is computed in the INSERT itself (see `#write`). */
  version: number(),
  deleted: boolean().insert(),
  input: number().nullable().insert(),
  output: number().nullable().insert(),
  cachedInput: number().nullable().insert(),
  cacheWrite: number().nullable().insert(),
  reasoning: number().nullable().insert(),
  /** Per audio token (migration 0014). */
  audioInput: number().nullable().insert(),
  audioOutput: number().nullable().insert(),
  cachedAudioInput: number().nullable().insert(),
  perImage: number().nullable().insert(),
  /** Per image input token (migration 0016). */
  imageInput: number().nullable().insert(),
  perAudioSecond: number().nullable().insert(),
  /** Per character of input (migration 0015). */
  perCharacter: number().nullable().insert(),
  createdBy: text().nullable().insert(),
  createdAt: timestamp(),
})

export type ModelPriceRecord = RecordOf<typeof modelPriceTable.fields>

export type ModelPriceFields = Pick<ModelPriceRecord, 'input' | 'output' | 'cachedInput' | 'cacheWrite' | 'reasoning' | 'audioInput' | 'audioOutput' | 'cachedAudioInput' | 'imageInput' | 'perImage' | 'perAudioSecond' | 'perCharacter'>

export interface ModelPriceKey {
  workspaceId: string | null
  provider: string
  model: string
}

export class ModelPriceRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async #write(organizationId: string, key: ModelPriceKey, fields: ModelPriceFields | null, createdBy: string | null): Promise<ModelPriceRecord> {
    const f = fields ?? {
      input: null, output: null, cachedInput: null, cacheWrite: null, reasoning: null, audioInput: null, audioOutput: null, cachedAudioInput: null, imageInput: null, perImage: null, perAudioSecond: null, perCharacter: null,
    }
    // The next version in one statement: the unique index turns a concurrent writer's race into a conflict (409).
    const insert = modelPriceTable.insert({ ...f, organizationId, workspaceId: key.workspaceId, provider: key.provider, model: key.model, deleted: fields === null, createdBy }, 5)
    const [row] = await this.#db.query(
      `INSERT INTO model_prices (${insert.columns}, version) SELECT ${insert.values}, coalesce(max(version), 0) + 1
       FROM model_prices WHERE organization_id = $1 AND coalesce(workspace_id, '') = coalesce($2, '') AND provider = $3 AND model = $4
       RETURNING ${modelPriceTable.columns}`,
      [organizationId, key.workspaceId, key.provider, key.model, ...insert.params],
    )
    const record = modelPriceTable.toRecord(row!)
    this.#sink.add({ resource: 'model_price', action: fields === null ? 'deleted' : 'updated', id: record.id })
    return record
  }

  put(organizationId: string, key: ModelPriceKey, fields: ModelPriceFields, createdBy: string | null): Promise<ModelPriceRecord> {
    return this.#write(organizationId, key, fields, createdBy)
  }

  /** Writes a deletion version; null when there was no current price to delete. */
  async remove(organizationId: string, key: ModelPriceKey, createdBy: string | null): Promise<ModelPriceRecord | null> {
    const current = (await this.history(organizationId, key))[0]
    if (!current || current.deleted) return null
    return this.#write(organizationId, key, null, createdBy)
  }

  /** The newest live version of every entry (optionally one workspace's and the organisation's). */
  async current(organizationId: string): Promise<ModelPriceRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${modelPriceTable.columns} FROM (
         SELECT DISTINCT ON (coalesce(workspace_id, ''), provider, model) * FROM model_prices WHERE organization_id = $1
         ORDER BY coalesce(workspace_id, ''), provider, model, version DESC
       ) latest WHERE NOT deleted ORDER BY provider, model, workspace_id NULLS FIRST`,
      [organizationId],
    )
    return rows.map((row) => modelPriceTable.toRecord(row))
  }

  /** Every version of one entry, newest first. */
  async history(organizationId: string, key: ModelPriceKey): Promise<ModelPriceRecord[]> {
    return modelPriceTable.rows(
      this.#db,
      "WHERE organization_id = $1 AND coalesce(workspace_id, '') = coalesce($2, '') AND provider = $3 AND model = $4 ORDER BY version DESC",
      [organizationId, key.workspaceId, key.provider, key.model],
    )
  }
}
