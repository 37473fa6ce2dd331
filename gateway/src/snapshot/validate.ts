import { createHash } from 'node:crypto'
import { gatewaySnapshot, type GatewaySnapshot } from './schema.ts'

export interface SnapshotProblem {
  path: string
  message: string
}

export type SnapshotValidation =
  | { ok: true; snapshot: GatewaySnapshot; hash: string }
  | { ok: false; problems: SnapshotProblem[] }

/** Validates an untrusted value fully; on success returns the parsed snapshot and its content hash. */
export function validateSnapshot(value: unknown): SnapshotValidation {
  const parsed = gatewaySnapshot.safeParse(value)
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || '(root)', message: issue.message })),
    }
  }
  return { ok: true, snapshot: parsed.data, hash: snapshotHash(parsed.data) }
}

/**
 * sha256 over the canonical JSON body (keys sorted), excluding `generation` and `producedAt`, so
 * two producers of the same policy agree on the hash.
 */
export function snapshotHash(snapshot: GatewaySnapshot): string {
  const { generation: _generation, producedAt: _producedAt, ...body } = snapshot
  return createHash('sha256').update(canonicalJson(body)).digest('hex')
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}
