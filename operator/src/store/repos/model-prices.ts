/**
 * Model price overrides, versioned: every change writes a new version of its (workspace, provider,
 * model) entry; a deletion is a version too. The newest version of each entry that is not a
 * deletion is what the compiler puts into `snapshot.prices`. Prices are USD per unit (per token,
 * per image, per second of audio).
 */
import { isoRequired, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import type { ChangeSink } from './sink.ts'

export interface ModelPriceFields {
  input: number | null
  output: number | null
  cachedInput: number | null
  cacheWrite: number | null
  reasoning: number | null
  perImage: number | null
  perAudioSecond: number | null
}

export interface ModelPriceRecord extends ModelPriceFields {
  id: string
  organizationId: string
  workspaceId: string | null
  provider: string
  model: string
  version: number
  deleted: boolean
  createdBy: string | null
  createdAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string | null
  provider: string
  model: string
  version: number
  deleted: boolean
  input: number | null
  output: number | null
  cached_input: number | null
  cache_write: number | null
  reasoning: number | null
  per_image: number | null
  per_audio_second: number | null
  created_by: string | null
  created_at: Date
}

function toRecord(row: Row): ModelPriceRecord {
  return {
    id: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id, provider: row.provider, model: row.model,
    version: row.version, deleted: row.deleted, input: row.input, output: row.output, cachedInput: row.cached_input,
    cacheWrite: row.cache_write, reasoning: row.reasoning, perImage: row.per_image, perAudioSecond: row.per_audio_second,
    createdBy: row.created_by, createdAt: isoRequired(row.created_at),
  }
}

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
    const f = fields ?? { input: null, output: null, cachedInput: null, cacheWrite: null, reasoning: null, perImage: null, perAudioSecond: null }
    // The next version in one statement: the unique index turns a concurrent writer's race into a conflict (409).
    const [row] = await this.#db.query<Row>(
      `INSERT INTO model_prices (id, organization_id, workspace_id, provider, model, version, deleted, input, output, cached_input,
         cache_write, reasoning, per_image, per_audio_second, created_by)
       SELECT $1, $2, $3, $4, $5, coalesce(max(version), 0) + 1, $6, $7, $8, $9, $10, $11, $12, $13, $14
       FROM model_prices WHERE organization_id = $2 AND coalesce(workspace_id, '') = coalesce($3, '') AND provider = $4 AND model = $5
       RETURNING *`,
      [newId(), organizationId, key.workspaceId, key.provider, key.model, fields === null, f.input, f.output, f.cachedInput, f.cacheWrite, f.reasoning, f.perImage, f.perAudioSecond, createdBy],
    )
    const record = toRecord(row!)
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
    const rows = await this.#db.query<Row>(
      `SELECT * FROM (
         SELECT DISTINCT ON (coalesce(workspace_id, ''), provider, model) * FROM model_prices WHERE organization_id = $1
         ORDER BY coalesce(workspace_id, ''), provider, model, version DESC
       ) latest WHERE NOT deleted ORDER BY provider, model, workspace_id NULLS FIRST`,
      [organizationId],
    )
    return rows.map(toRecord)
  }

  /** Every version of one entry, newest first. */
  async history(organizationId: string, key: ModelPriceKey): Promise<ModelPriceRecord[]> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM model_prices WHERE organization_id = $1 AND coalesce(workspace_id, '') = coalesce($2, '') AND provider = $3 AND model = $4
       ORDER BY version DESC`,
      [organizationId, key.workspaceId, key.provider, key.model],
    )
    return rows.map(toRecord)
  }
}
