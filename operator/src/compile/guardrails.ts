/**
 * Guardrails into the snapshot: each active guardrail with its checks and actions as stored, its
 * stream hold-back (admin `actions.hold_back`), and the default attachments: the organisation's
 * guardrails (ids) and each workspace's `defaults.input_guardrails` / `output_guardrails` (slugs
 * or ids, resolved as the workspace sees them), with the workspaces exempted from the
 * organisation's guardrails. A default naming no guardrail the workspace can use is left out and
 * reported, never sent for the gateway to refuse.
 */
import type { GatewaySnapshotInput, SnapshotGuardrail } from '@gatehouse/gateway/snapshot'
import type { GuardrailRecord, OrganisationGuardrails, WorkspaceRecord } from '../store/index.ts'

function holdBack(actions: Record<string, unknown>): SnapshotGuardrail['holdBack'] {
  const given = actions.hold_back as { mode?: unknown; window_chars?: unknown } | undefined
  const mode = given?.mode === 'window' || given?.mode === 'all' ? given.mode : 'none'
  return { mode, windowChars: typeof given?.window_chars === 'number' ? given.window_chars : 256 }
}

export function compileGuardrails(guardrails: readonly GuardrailRecord[]): NonNullable<GatewaySnapshotInput['guardrails']> {
  return guardrails.map((guardrail) => ({
    id: guardrail.id,
    slug: guardrail.slug,
    name: guardrail.name,
    workspaceId: guardrail.workspaceId,
    version: guardrail.version,
    checks: guardrail.checks.map((check) => ({
      id: String(check.id),
      parameters: (check.parameters ?? {}) as Record<string, unknown>,
      isEnabled: check.is_enabled !== false,
    })),
    actions: guardrail.actions,
    hooks: guardrail.hooks as SnapshotGuardrail['hooks'],
    holdBack: holdBack(guardrail.actions),
  }))
}

export function compileGuardrailDefaults(
  guardrails: readonly GuardrailRecord[],
  organisation: OrganisationGuardrails,
  excludedWorkspaceIds: readonly string[],
  workspaces: readonly WorkspaceRecord[],
  report: (path: string, message: string) => void,
): NonNullable<GatewaySnapshotInput['guardrailDefaults']> {
  const known = new Set(guardrails.map((g) => g.id))
  const find = (reference: string, workspaceId: string | null): GuardrailRecord | undefined =>
    guardrails.find((g) => g.workspaceId === workspaceId && (g.id === reference || g.slug === reference)) ??
    guardrails.find((g) => g.workspaceId === null && (g.id === reference || g.slug === reference))
  const entries: NonNullable<GatewaySnapshotInput['guardrailDefaults']> = []
  const inSnapshot = new Set(workspaces.map((w) => w.id))
  const organisationEntry = {
    workspaceId: null,
    input: organisation.input.filter((id) => known.has(id)),
    output: organisation.output.filter((id) => known.has(id)),
    excludedWorkspaceIds: excludedWorkspaceIds.filter((id) => inSnapshot.has(id)),
  }
  if (organisationEntry.input.length + organisationEntry.output.length > 0) entries.push(organisationEntry)
  for (const workspace of workspaces) {
    const lists = { input: workspace.defaults.input_guardrails, output: workspace.defaults.output_guardrails }
    const resolved = { input: [] as string[], output: [] as string[] }
    for (const hook of ['input', 'output'] as const) {
      const given = Array.isArray(lists[hook]) ? (lists[hook] as unknown[]) : []
      for (const reference of given) {
        const guardrail = typeof reference === 'string' ? find(reference, workspace.id) : undefined
        if (guardrail) resolved[hook].push(guardrail.id)
        else report(`workspaces.${workspace.slug}.defaults.${hook}_guardrails`, `no active guardrail '${String(reference)}' for this workspace; left out`)
      }
    }
    if (resolved.input.length + resolved.output.length > 0) entries.push({ workspaceId: workspace.id, ...resolved })
  }
  return entries
}
