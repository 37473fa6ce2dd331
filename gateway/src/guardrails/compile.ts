/**
 * Compiles the snapshot's guardrails once per snapshot: each check's parameters validated with
 * its module's schema (defaults filled), regexes and JSON schemas built, and the default
 * attachments (organisation, workspaces) resolved to compiled guardrails. A check the gateway
 * cannot run (an unknown id, parameters its module refuses) fails closed: it fails on every
 * request with an error saying why, so its guardrail denies or flags, never silently allows. It is
 * also reported as a problem, but one tenant's bad guardrail does not make the gateway refuse the
 * whole snapshot.
 */
import type { Dispatcher } from 'undici'
import type { SnapshotGuardrail, SnapshotGuardrailDefaults } from '../snapshot/policies.ts'
import { CHECKS } from './checks/index.ts'
import type { CompiledCheck } from './checks/check.ts'

export interface Feedback {
  readonly value: number
  readonly weight: number
  readonly metadata: string
}

export interface CompiledGuardrail {
  readonly id: string
  readonly slug: string
  readonly workspaceId: string | null
  /** Enabled checks, mutating ones first (in their order), then the rest. */
  readonly checks: ReadonlyArray<{ readonly id: string; readonly check: CompiledCheck }>
  readonly deny: boolean
  readonly async: boolean
  readonly onSuccess: Feedback | null
  readonly onFail: Feedback | null
  readonly holdBack: SnapshotGuardrail['holdBack']
  /** Every check is inline: the guardrail can be judged without awaiting anything. */
  readonly inline: boolean
}

export interface Attached {
  readonly input: readonly CompiledGuardrail[]
  readonly output: readonly CompiledGuardrail[]
}

export interface GuardrailRuntime {
  /** By id or slug, as a workspace sees it (its own and the organisation's). */
  find(reference: string, workspaceId: string | null): CompiledGuardrail | undefined
  /** The organisation's defaults (unless the workspace is exempted) plus the workspace's, each guardrail once. */
  defaults(workspaceId: string | null): Attached
  /** No guardrail at all: the stages step aside at the cost of one check. */
  readonly empty: boolean
}

export interface CompileProblem {
  path: string
  message: string
}

export interface GuardrailDeps {
  /** The SSRF-safe dispatcher the network checks call out through. */
  readonly dispatcher: Dispatcher
}

function feedback(value: unknown): Feedback | null {
  const inner = (value as { feedback?: Record<string, unknown> } | undefined)?.feedback
  if (!inner || typeof inner.value !== 'number') return null
  return { value: inner.value, weight: typeof inner.weight === 'number' ? inner.weight : 1, metadata: typeof inner.metadata === 'string' ? inner.metadata : '' }
}

/** A check that cannot run: fails on every request, saying why. */
function failingCheck(reason: string): CompiledCheck {
  return {
    run: () => {
      throw new Error(`check cannot run: ${reason}`)
    },
    timeoutMs: null,
    failOnError: true,
    mutates: false,
    failsEarly: false,
  }
}

function compileOne(guardrail: SnapshotGuardrail, path: string, deps: GuardrailDeps, problems: CompileProblem[]): CompiledGuardrail {
  const checks: Array<{ id: string; check: CompiledCheck }> = []
  guardrail.checks.forEach((entry, index) => {
    if (!entry.isEnabled) return
    const definition = CHECKS.get(entry.id)
    if (!definition) {
      const message = `this gateway has no check '${entry.id}'`
      problems.push({ path: `${path}.checks.${index}.id`, message })
      checks.push({ id: entry.id, check: failingCheck(message) })
      return
    }
    const parsed = definition.parameters.safeParse(entry.parameters)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      const where = issue.path.length ? `parameters.${issue.path.join('.')}` : 'parameters'
      problems.push({ path: `${path}.checks.${index}.${where}`, message: issue.message })
      checks.push({ id: entry.id, check: failingCheck(`${where}: ${issue.message}`) })
      return
    }
    checks.push({ id: entry.id, check: definition.compile(parsed.data, deps) })
  })
  const actions = guardrail.actions
  const ordered = [...checks.filter((c) => c.check.mutates), ...checks.filter((c) => !c.check.mutates)]
  return {
    id: guardrail.id,
    slug: guardrail.slug,
    workspaceId: guardrail.workspaceId,
    checks: ordered,
    deny: actions.deny === true,
    async: actions.async === true,
    onSuccess: feedback(actions.on_success),
    onFail: feedback(actions.on_fail),
    holdBack: guardrail.holdBack,
    inline: ordered.every((c) => c.check.timeoutMs === null),
  }
}

/** Adds guardrails to a list unless already there (attached twice runs once). */
export function union(...lists: ReadonlyArray<readonly CompiledGuardrail[]>): CompiledGuardrail[] {
  const seen = new Set<string>()
  const out: CompiledGuardrail[] = []
  for (const list of lists) {
    for (const guardrail of list) {
      if (seen.has(guardrail.id)) continue
      seen.add(guardrail.id)
      out.push(guardrail)
    }
  }
  return out
}

const NONE: Attached = { input: [], output: [] }

export function compileGuardrails(
  guardrails: readonly SnapshotGuardrail[],
  defaults: readonly SnapshotGuardrailDefaults[],
  deps: GuardrailDeps,
): { runtime: GuardrailRuntime; problems: CompileProblem[] } {
  const problems: CompileProblem[] = []
  const byKey = new Map<string, CompiledGuardrail>()
  guardrails.forEach((record, index) => {
    const compiled = compileOne(record, `guardrails.${index}`, deps, problems)
    byKey.set(`id:${record.id}`, compiled)
    byKey.set(`${record.workspaceId ?? '*'}/${record.slug}`, compiled)
  })
  const find = (reference: string, workspaceId: string | null): CompiledGuardrail | undefined => {
    const candidate = (workspaceId !== null ? byKey.get(`${workspaceId}/${reference}`) : undefined) ?? byKey.get(`*/${reference}`) ?? byKey.get(`id:${reference}`)
    return candidate && (candidate.workspaceId === null || candidate.workspaceId === workspaceId) ? candidate : undefined
  }
  const resolve = (ids: readonly string[], workspaceId: string | null, path: string): CompiledGuardrail[] =>
    ids.flatMap((reference, index) => {
      const found = find(reference, workspaceId)
      if (!found) problems.push({ path: `${path}.${index}`, message: `no guardrail '${reference}' is available here` })
      return found ? [found] : []
    })
  let organization: Attached = NONE
  let exempted: ReadonlySet<string> = new Set()
  const perWorkspace = new Map<string, Attached>()
  defaults.forEach((entry, index) => {
    const attached = { input: resolve(entry.input, entry.workspaceId, `guardrailDefaults.${index}.input`), output: resolve(entry.output, entry.workspaceId, `guardrailDefaults.${index}.output`) }
    if (entry.workspaceId === null) {
      organization = attached
      exempted = new Set(entry.excludedWorkspaceIds ?? [])
    } else perWorkspace.set(entry.workspaceId, attached)
  })
  const merged = new Map<string | null, Attached>()
  const defaultsFor = (workspaceId: string | null): Attached => {
    let attached = merged.get(workspaceId)
    if (!attached) {
      const own = workspaceId === null ? NONE : (perWorkspace.get(workspaceId) ?? NONE)
      // An exempted workspace (organisation_exclusions) meets only its own defaults.
      const fromOrganisation = workspaceId !== null && exempted.has(workspaceId) ? NONE : organization
      attached = { input: union(fromOrganisation.input, own.input), output: union(fromOrganisation.output, own.output) }
      merged.set(workspaceId, attached)
    }
    return attached
  }
  return { runtime: { find, defaults: defaultsFor, empty: byKey.size === 0 }, problems }
}
