/**
 * One pino logger for the process; credentials and keys are redacted wherever they could appear.
 * Times are ISO 8601. On a terminal the lines are printed for people (time, level, message, then
 * the fields); otherwise, and with GATEHOUSE_LOG_FORMAT=json, one JSON object per line for the log
 * pipeline. GATEHOUSE_LOG_FORMAT=pretty forces the console form.
 */
import { Writable } from 'node:stream'
import { pino, type DestinationStream, type Logger } from 'pino'

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
const COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' }
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name'])

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value
  if (value !== null && typeof value === 'object' && 'message' in value && 'type' in value) {
    // A serialised error: its message and, below, its stack.
    const error = value as { message: string; stack?: string }
    return JSON.stringify(error.message)
  }
  return JSON.stringify(value)
}

/** One JSON log line -> `2026-11-23T12:00:00.000Z INFO  gatehouse: message key=value ...`. */
export function prettyLine(json: string, colour: boolean): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(json) as Record<string, unknown>
  } catch {
    return json
  }
  const level = typeof entry.level === 'number' ? entry.level : 30
  const label = (LEVELS[level] ?? String(level)).padEnd(5)
  const fields = Object.entries(entry).filter(([key]) => !OMITTED.has(key)).map(([key, value]) => `${key}=${fieldValue(value)}`)
  const stack = (entry.err as { stack?: string } | undefined)?.stack
  const head = `${String(entry.time)} ${colour ? `\u001b[${COLOURS[level] ?? '0'}m${label}\u001b[0m` : label} ${entry.name ? `${String(entry.name)}: ` : ''}${String(entry.msg ?? '')}`
  return `${[head, ...fields].join(' ')}${stack && level >= 50 ? `\n${stack}` : ''}\n`
}

function prettyStream(output: NodeJS.WriteStream): DestinationStream {
  let pending = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8')
      let newline: number
      while ((newline = pending.indexOf('\n')) !== -1) {
        output.write(prettyLine(pending.slice(0, newline), output.isTTY === true))
        pending = pending.slice(newline + 1)
      }
      done()
    },
  })
  return stream as unknown as DestinationStream
}

export function logFormat(env: NodeJS.ProcessEnv, output: { isTTY?: boolean }): 'pretty' | 'json' {
  const format = env.GATEHOUSE_LOG_FORMAT
  if (format === 'json' || format === 'pretty') return format
  if (format !== undefined && format !== '') throw new Error(`GATEHOUSE_LOG_FORMAT must be json or pretty, got '${format}'`)
  return output.isTTY === true ? 'pretty' : 'json'
}

export function createLogger(env: NodeJS.ProcessEnv, name: string, output: NodeJS.WriteStream = process.stdout): Logger {
  const options = {
    name,
    level: env.GATEHOUSE_LOG_LEVEL ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-gateway-api-key"]',
        'req.headers["x-api-key"]',
        '*.credentials',
        '*.apiKey',
        '*.rawKey',
        '*.password',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  }
  return logFormat(env, output) === 'pretty' ? pino(options, prettyStream(output)) : pino(options)
}
