/**
 * SCIM provisioning state: bearer tokens, groups and their members, and the mappings of groups to
 * workspaces with a role.
 *
 * Workspace membership from groups: `syncMemberships(userIds)` recomputes, for each user, the
 * workspaces their groups are mapped to (the strongest role wins when several groups map to one
 * workspace) and brings `workspace_members` rows marked `granted_by_scim` in line. A membership
 * given by hand (not marked) is never changed or removed by SCIM.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, newId } from '../rows.ts'
import { table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import type { WorkspaceRole } from './members.ts'

/** The `scim_tokens` table; the hash is written, never read back into a record. */
export const scimTokenTable = table('scim_tokens', {
  id: text().generated(newId),
  organizationId: text().insert(),
  name: text().insert(),
  tokenHash: text().insert().hidden(),
  createdBy: text().nullable().insert(),
  createdAt: timestamp(),
  lastUsedAt: timestamp().nullable(),
  revokedAt: timestamp().nullable(),
})

export type ScimTokenRecord = RecordOf<typeof scimTokenTable.fields>

/** The `scim_groups` table; a group's record adds its members (from `scim_group_members`). */
export const scimGroupTable = table('scim_groups', {
  id: text().generated(newId),
  organizationId: text().insert(),
  displayName: text().insert().patch(),
  externalId: text().nullable().insert().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

type ScimGroupRow = RecordOf<typeof scimGroupTable.fields>

export type ScimGroupRecord = ScimGroupRow & {
  /** Member user ids, oldest first. */
  memberIds: string[]
}

export interface ScimMappingRecord {
  id: string
  organizationId: string
  workspaceId: string
  groupId: string
  groupName: string
  role: WorkspaceRole
  status: 'active' | 'archived'
  createdAt: string
}

interface MappingRow {
  id: string
  organization_id: string
  workspace_id: string
  group_id: string
  display_name: string
  role: WorkspaceRole
  status: 'active' | 'archived'
  created_at: Date
}

const ROLE_STRENGTH: Record<WorkspaceRole, number> = { member: 0, manager: 1, admin: 2 }

function toMapping(row: MappingRow): ScimMappingRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    groupId: row.group_id,
    groupName: row.display_name,
    role: row.role,
    status: row.status,
    createdAt: isoRequired(row.created_at),
  }
}

const MAPPING_SELECT = `SELECT m.id, m.organization_id, m.workspace_id, m.group_id, g.display_name, m.role, m.status, m.created_at
  FROM scim_workspace_mappings m JOIN scim_groups g ON g.id = m.group_id`

export class ScimRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  // Tokens -------------------------------------------------------------------------------------

  async createToken(input: { organizationId: string; name: string; tokenHash: string; createdBy: string | null }): Promise<ScimTokenRecord> {
    return scimTokenTable.create(this.#db, input)
  }

  /** The live token with this hash, its last use stamped. */
  async useToken(tokenHash: string, now: Date): Promise<ScimTokenRecord | null> {
    const [row] = await this.#db.query(
      `UPDATE scim_tokens SET last_used_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL RETURNING ${scimTokenTable.columns}`,
      [tokenHash, now.toISOString()],
    )
    return row ? scimTokenTable.toRecord(row) : null
  }

  async listTokens(organizationId: string): Promise<ScimTokenRecord[]> {
    return scimTokenTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
  }

  async revokeToken(organizationId: string, id: string, now: Date): Promise<boolean> {
    const rows = await this.#db.query('UPDATE scim_tokens SET revoked_at = $3 WHERE organization_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING id', [organizationId, id, now.toISOString()])
    return rows.length > 0
  }

  // Groups -------------------------------------------------------------------------------------

  async #members(groupIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(groupIds.map((id) => [id, []]))
    if (groupIds.length === 0) return out
    const rows = await this.#db.query<{ group_id: string; user_id: string }>(
      'SELECT group_id, user_id FROM scim_group_members WHERE group_id = ANY($1::text[]) ORDER BY created_at, user_id',
      [groupIds],
    )
    for (const row of rows) out.get(row.group_id)?.push(row.user_id)
    return out
  }

  async #withMembers(groups: ScimGroupRow[]): Promise<ScimGroupRecord[]> {
    const members = await this.#members(groups.map((group) => group.id))
    return groups.map((group) => ({ ...group, memberIds: members.get(group.id) ?? [] }))
  }

  async createGroup(input: { organizationId: string; displayName: string; externalId?: string | null }): Promise<ScimGroupRecord> {
    return (await this.#withMembers([await scimGroupTable.create(this.#db, input)]))[0]!
  }

  async getGroup(organizationId: string, id: string): Promise<ScimGroupRecord | null> {
    const rows = await scimGroupTable.rows(this.#db, 'WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return (await this.#withMembers(rows))[0] ?? null
  }

  async findGroupByName(organizationId: string, displayName: string): Promise<ScimGroupRecord | null> {
    const rows = await scimGroupTable.rows(this.#db, 'WHERE organization_id = $1 AND lower(display_name) = lower($2)', [organizationId, displayName])
    return (await this.#withMembers(rows))[0] ?? null
  }

  async listGroups(organizationId: string): Promise<ScimGroupRecord[]> {
    return this.#withMembers(await scimGroupTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId]))
  }

  async updateGroup(organizationId: string, id: string, patch: { displayName?: string; externalId?: string | null }): Promise<boolean> {
    const set = scimGroupTable.set(patch, 3)
    const rows = await this.#db.query(`UPDATE scim_groups SET ${set.sql} WHERE organization_id = $1 AND id = $2 RETURNING id`, [organizationId, id, ...set.params])
    return rows.length > 0
  }

  /** Deletes the group; returns its former members (whose memberships must be recomputed). */
  async deleteGroup(organizationId: string, id: string): Promise<string[] | null> {
    const group = await this.getGroup(organizationId, id)
    if (!group) return null
    await this.#db.query('DELETE FROM scim_groups WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return group.memberIds
  }

  async addMembers(groupId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return
    await this.#db.query(
      'INSERT INTO scim_group_members (group_id, user_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING',
      [groupId, userIds],
    )
    await this.#touch(groupId)
  }

  async removeMembers(groupId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return
    await this.#db.query('DELETE FROM scim_group_members WHERE group_id = $1 AND user_id = ANY($2::text[])', [groupId, userIds])
    await this.#touch(groupId)
  }

  async #touch(groupId: string): Promise<void> {
    await this.#db.query('UPDATE scim_groups SET updated_at = now() WHERE id = $1', [groupId])
  }

  async groupsOf(userId: string): Promise<Array<{ id: string; displayName: string }>> {
    const rows = await this.#db.query<{ id: string; display_name: string }>(
      'SELECT g.id, g.display_name FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id WHERE m.user_id = $1 ORDER BY g.display_name',
      [userId],
    )
    return rows.map((row) => ({ id: row.id, displayName: row.display_name }))
  }

  // Group -> workspace mappings ----------------------------------------------------------------

  async createMapping(input: { organizationId: string; workspaceId: string; groupId: string; role: WorkspaceRole }): Promise<ScimMappingRecord> {
    const id = newId()
    await this.#db.query(
      'INSERT INTO scim_workspace_mappings (id, organization_id, workspace_id, group_id, role) VALUES ($1, $2, $3, $4, $5)',
      [id, input.organizationId, input.workspaceId, input.groupId, input.role],
    )
    return (await this.getMapping(input.organizationId, id))!
  }

  async getMapping(organizationId: string, id: string): Promise<ScimMappingRecord | null> {
    const rows = await this.#db.query<MappingRow>(`${MAPPING_SELECT} WHERE m.organization_id = $1 AND m.id = $2`, [organizationId, id])
    return rows[0] ? toMapping(rows[0]) : null
  }

  async listMappings(organizationId: string, filter: { workspaceId?: string; groupId?: string; role?: WorkspaceRole }): Promise<ScimMappingRecord[]> {
    const where = new Where().add('m.organization_id = ?', organizationId).add("m.status = 'active'")
      .maybe('m.workspace_id = ?', filter.workspaceId).maybe('m.group_id = ?', filter.groupId).maybe('m.role = ?', filter.role)
    const rows = await this.#db.query<MappingRow>(`${MAPPING_SELECT}${where.sql} ORDER BY m.created_at, m.id`, where.params)
    return rows.map(toMapping)
  }

  async archiveMapping(organizationId: string, id: string, now: Date): Promise<ScimMappingRecord | null> {
    const rows = await this.#db.query<{ id: string }>(
      "UPDATE scim_workspace_mappings SET status = 'archived', archived_at = $3 WHERE organization_id = $1 AND id = $2 AND status = 'active' RETURNING id",
      [organizationId, id, now.toISOString()],
    )
    return rows[0] ? this.getMapping(organizationId, id) : null
  }

  // Memberships from groups --------------------------------------------------------------------

  /** Brings the SCIM-granted workspace memberships of these users in line with their groups. */
  async syncMemberships(userIds: readonly string[]): Promise<void> {
    for (const userId of new Set(userIds)) await this.#syncUser(userId)
  }

  async #syncUser(userId: string): Promise<void> {
    const grants = await this.#db.query<{ workspace_id: string; role: WorkspaceRole }>(
      `SELECT m.workspace_id, m.role FROM scim_workspace_mappings m
         JOIN scim_group_members gm ON gm.group_id = m.group_id
       WHERE gm.user_id = $1 AND m.status = 'active'`,
      [userId],
    )
    const wanted = new Map<string, WorkspaceRole>()
    for (const grant of grants) {
      const held = wanted.get(grant.workspace_id)
      if (held === undefined || ROLE_STRENGTH[grant.role] > ROLE_STRENGTH[held]) wanted.set(grant.workspace_id, grant.role)
    }
    const current = await this.#db.query<{ workspace_id: string; role: WorkspaceRole; granted_by_scim: boolean }>(
      'SELECT workspace_id, role, granted_by_scim FROM workspace_members WHERE user_id = $1',
      [userId],
    )
    const byWorkspace = new Map(current.map((row) => [row.workspace_id, row]))
    for (const row of current) {
      if (!row.granted_by_scim || wanted.has(row.workspace_id)) continue
      await this.#db.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 AND granted_by_scim', [row.workspace_id, userId])
      this.#sink.add({ resource: 'member', action: 'deleted', id: `${row.workspace_id}/${userId}` })
    }
    for (const [workspaceId, role] of wanted) {
      const existing = byWorkspace.get(workspaceId)
      if (existing && (!existing.granted_by_scim || existing.role === role)) continue
      await this.#db.query(
        `INSERT INTO workspace_members (workspace_id, user_id, role, granted_by_scim) VALUES ($1, $2, $3, true)
         ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now() WHERE workspace_members.granted_by_scim`,
        [workspaceId, userId, role],
      )
      this.#sink.add({ resource: 'member', action: 'updated', id: `${workspaceId}/${userId}` })
    }
  }
}
