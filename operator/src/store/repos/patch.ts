/**
 * Builds `SET col = $n` lists for partial updates. Column names come from a fixed map written in
 * the repository (never from the request); values are always bound parameters.
 */
export type ColumnKind = 'value' | 'jsonb' | 'timestamptz'

export function setClause<P extends object>(
  patch: P,
  columns: { [K in keyof P]?: readonly [column: string, kind: ColumnKind] },
  firstParam: number,
): { sql: string; params: unknown[] } {
  const parts: string[] = []
  const params: unknown[] = []
  for (const [field, spec] of Object.entries(columns) as Array<[keyof P, readonly [string, ColumnKind]]>) {
    if (!(field in patch) || patch[field] === undefined) continue
    const value = patch[field]
    const [column, kind] = spec
    params.push(kind === 'jsonb' ? JSON.stringify(value) : value)
    const placeholder = `$${firstParam + params.length - 1}`
    parts.push(`${column} = ${kind === 'value' ? placeholder : `${placeholder}::${kind}`}`)
  }
  parts.push('updated_at = now()')
  return { sql: parts.join(', '), params }
}
