/**
 * Logs: /v1/logs (list with filters and a cursor, each log with its trace's feedback),
 * /v1/logs/{id} (one log with its bodies and feedback, `log_format`), /v1/logs/export (streamed JSONL or CSV of a filtered range, needs
 * `logs.export`) and /v1/logs/groups/{groupBy} (the grouped analytics of analytics.ts).
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { notFound } from '../../errors.ts'
import { feedbackForLogs, feedbackKey } from '../../usage/feedback.ts'
import { whereOf } from '../../usage/filters.ts'
import { csvLine, CSV_COLUMNS, decodeCursor, getLog, listLogs, logView } from '../../usage/logs.ts'
import type { AdminContext } from '../context.ts'
import { parse } from '../http.ts'
import { registerGroupRoute } from './analytics.ts'
import { usageScope } from './usage-scope.ts'

export const LOG_FORMAT = 'gatehouse.v1'
const MAX_LIST = 100
const EXPORT_PAGE = 1000
/** An export stops here; narrow the range for more. */
const MAX_EXPORT_ROWS = 1_000_000

const listQuery = z.object({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIST).optional(),
  page_size: z.coerce.number().int().min(1).max(MAX_LIST).optional(),
}).loose()
const exportQuery = z.object({ format: z.enum(['jsonl', 'csv']).default('jsonl'), include_bodies: z.enum(['true', 'false']).optional() }).loose()

export function logRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', async (request) => {
    const { organizationId, reach, filters } = await usageScope(ctx, request, 'logs', 'logs.list')
    const q = parse(listQuery, request.query)
    const where = whereOf(organizationId, filters, reach, 'logs')
    const db = ctx.store.usageLogs.reader
    const page = await listLogs(db, where, q.limit ?? q.page_size ?? 50, q.cursor ? decodeCursor(q.cursor) : null)
    const feedback = await feedbackForLogs(db, organizationId, page.rows)
    return {
      object: 'list',
      data: page.rows.map((row) => ({ ...logView(row, false), feedback: feedback.get(feedbackKey(row.workspace_id, row.trace_id)) ?? [] })),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
    }
  })

  app.get('/export', async (request, reply) => {
    const { organizationId, reach, filters } = await usageScope(ctx, request, 'logs', 'logs.export')
    const q = parse(exportQuery, request.query)
    const bodies = q.include_bodies === 'true'
    const where = whereOf(organizationId, filters, reach, 'logs')
    const db = ctx.store.usageLogs.reader
    // The first page is read before answering, so a failing query is still a proper error.
    let page = await listLogs(db, where, EXPORT_PAGE, null, bodies)
    reply.hijack()
    const out = reply.raw
    out.writeHead(200, {
      'content-type': q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
      'content-disposition': `attachment; filename="gatehouse-logs.${q.format}"`,
    })
    if (q.format === 'csv') out.write(`${CSV_COLUMNS.join(',')}\n`)
    let written = 0
    try {
      for (;;) {
        for (const row of page.rows) {
          const view = logView(row, bodies)
          const ok = out.write(q.format === 'csv' ? csvLine(view) : `${JSON.stringify(view)}\n`)
          written++
          if (!ok) await new Promise((resolve) => out.once('drain', resolve))
        }
        if (page.nextCursor === null || written >= MAX_EXPORT_ROWS || out.destroyed) break
        page = await listLogs(db, where, EXPORT_PAGE, decodeCursor(page.nextCursor), bodies)
      }
    } catch (error) {
      request.log.error({ err: { message: (error as Error).message } }, 'log export failed mid-stream')
      out.destroy()
      return
    }
    out.end()
  })

  registerGroupRoute(app, ctx, '/groups/:groupBy', 'logs')

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const { organizationId, reach, filters } = await usageScope(ctx, request, 'logs', ['logs.view', 'logs.read'])
    const where = whereOf(organizationId, { ...filters, fromMs: null, toMs: null }, reach, 'logs')
    const db = ctx.store.usageLogs.reader
    const row = await getLog(db, where, request.params.id)
    if (!row) throw notFound('log')
    // Feedback from the log's own workspace only: another workspace may name the same trace id.
    const feedback = await feedbackForLogs(db, organizationId, [row])
    return {
      ...logView(row, true),
      log_format: LOG_FORMAT,
      annotations: row.annotations ?? {},
      feedback: feedback.get(feedbackKey(row.workspace_id, row.trace_id)) ?? [],
    }
  })
}
