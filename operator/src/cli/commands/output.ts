/** Table or JSON output for the operator commands. */

export type OutputFormat = 'table' | 'json'

export function outputFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === 'table') return 'table'
  if (value === 'json') return 'json'
  throw new Error(`unknown output '${value}': use table or json`)
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

/** Fixed-width columns under upper-case headers, as `kubectl get` prints them. */
export function table(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): string {
  const cells = [columns.map((column) => column.toUpperCase()), ...rows.map((row) => columns.map((column) => cell(row[column])))]
  const widths = columns.map((_column, index) => Math.max(...cells.map((line) => line[index]!.length)))
  return `${cells.map((line) => line.map((value, index) => (index === line.length - 1 ? value : value.padEnd(widths[index]!))).join('   ')).join('\n')}\n`
}

export function render(format: OutputFormat, value: unknown, rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : table(rows, columns)
}
