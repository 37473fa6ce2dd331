/**
 * The organisation's guardrails: ordered input and output lists of guardrail ids, and the
 * workspaces exempted from them (`organisation_exclusions`).
 */
import type { SqlExecutor } from '../sql.ts'
import type { ChangeSink } from './sink.ts'

export interface OrganisationGuardrails {
  input: string[]
  output: string[]
}

export class OrganisationGuardrailRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async get(organizationId: string): Promise<OrganisationGuardrails> {
    const rows = await this.#db.query<{ guardrail_id: string; hook: 'input' | 'output' }>(
      'SELECT guardrail_id, hook FROM organisation_guardrails WHERE organization_id = $1 ORDER BY hook, position',
      [organizationId],
    )
    return { input: rows.filter((r) => r.hook === 'input').map((r) => r.guardrail_id), output: rows.filter((r) => r.hook === 'output').map((r) => r.guardrail_id) }
  }

  /** Replaces both lists (run inside a transaction so readers never see half of it). */
  async set(organizationId: string, lists: OrganisationGuardrails): Promise<void> {
    await this.#db.query('DELETE FROM organisation_guardrails WHERE organization_id = $1', [organizationId])
    for (const hook of ['input', 'output'] as const) {
      for (const [position, guardrailId] of lists[hook].entries()) {
        await this.#db.query('INSERT INTO organisation_guardrails (organization_id, guardrail_id, hook, position) VALUES ($1, $2, $3, $4)', [organizationId, guardrailId, hook, position])
      }
    }
    this.#sink.add({ resource: 'organization', action: 'updated', id: organizationId })
  }

  /** Ids of the workspaces exempted from the organisation's guardrails, oldest exemption first. */
  async exclusions(organizationId: string): Promise<string[]> {
    const rows = await this.#db.query<{ workspace_id: string }>(
      'SELECT workspace_id FROM organisation_guardrail_exclusions WHERE organization_id = $1 ORDER BY created_at, workspace_id',
      [organizationId],
    )
    return rows.map((row) => row.workspace_id)
  }

  /** Replaces the exempted workspaces (run inside a transaction); those kept keep their place. */
  async setExclusions(organizationId: string, workspaceIds: readonly string[]): Promise<void> {
    await this.#db.query(
      'DELETE FROM organisation_guardrail_exclusions WHERE organization_id = $1 AND workspace_id NOT IN (SELECT jsonb_array_elements_text($2::jsonb))',
      [organizationId, JSON.stringify(workspaceIds)],
    )
    for (const workspaceId of workspaceIds) {
      await this.#db.query(
        'INSERT INTO organisation_guardrail_exclusions (organization_id, workspace_id) VALUES ($1, $2) ON CONFLICT (organization_id, workspace_id) DO NOTHING',
        [organizationId, workspaceId],
      )
    }
    this.#sink.add({ resource: 'organization', action: 'updated', id: organizationId })
  }
}
