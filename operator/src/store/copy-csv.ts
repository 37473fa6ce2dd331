/**
 * Rows for `COPY … FROM STDIN (FORMAT csv)`: every non-null value is quoted (a quote doubled), so
 * commas, quotes, newlines and backslashes travel as they are, and NULL is the bare empty field,
 * which a quoted empty string is not. Strings go as they are (callers turn JSON values into their
 * JSON text first); numbers, booleans and ISO timestamps as their text, which PostgreSQL reads back
 * as the column's type.
 */

function field(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : String(value)
  return `"${text.replaceAll('"', '""')}"`
}

/** One CSV line (with its newline) of `values`, in column order. */
export function csvRow(values: readonly unknown[]): string {
  let line = ''
  for (let index = 0; index < values.length; index++) line += (index === 0 ? '' : ',') + field(values[index])
  return `${line}\n`
}

/** Lines grouped into chunks of about `chunkChars` characters, so the stream carries few large writes. */
export function* csvChunks(rows: Iterable<readonly unknown[]>, chunkChars = 256 * 1024): Generator<string> {
  let chunk = ''
  for (const row of rows) {
    chunk += csvRow(row)
    if (chunk.length >= chunkChars) {
      yield chunk
      chunk = ''
    }
  }
  if (chunk.length > 0) yield chunk
}
