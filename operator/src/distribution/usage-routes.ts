/**
 * The control plane's usage ingest: gateways POST batches of usage records here with the gateway
 * token (the one the snapshot stream takes). Each record is checked against the contract schema;
 * the valid ones are stored once each (a retried batch adds nothing), the invalid ones are named
 * in the answer and not retried. A store failure is a 503 with Retry-After, so the gateway keeps
 * the batch in its spool and sends it again later.
 */
import type { FastifyInstance } from 'fastify'
import { USAGE_INGEST_PATH, usageBatch, usageRecord, type UsageIngestResult, type UsageRecord } from '@gatehouse/gateway/snapshot'
import type { Store } from '../store/index.ts'
import { sameToken } from './sync-routes.ts'

/** Gateway clocks may run a little ahead; further than this is a broken record. */
const MAX_FUTURE_MS = 3_600_000
/** Batches are JSON with bodies: bigger than the admin API's limit. */
export const USAGE_BODY_LIMIT_BYTES = 64 * 1024 * 1024

export interface UsageIngestOptions {
  store: Store
  gatewayToken: string
  now?: () => number
}

/** Validates a batch: what can be stored, and what cannot (by position). */
export function checkRecords(values: readonly unknown[], nowMs: number): { records: UsageRecord[]; rejected: UsageIngestResult['rejected'] } {
  const records: UsageRecord[] = []
  const rejected: UsageIngestResult['rejected'] = []
  values.forEach((value, index) => {
    const parsed = usageRecord.safeParse(value)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      rejected.push({ index, message: `${issue.path.join('.') || '(record)'}: ${issue.message}` })
      return
    }
    if (Date.parse(parsed.data.createdAt) > nowMs + MAX_FUTURE_MS) {
      rejected.push({ index, message: 'createdAt: more than an hour in the future' })
      return
    }
    records.push(parsed.data)
  })
  return { records, rejected }
}

export function registerUsageIngestRoute(app: FastifyInstance, options: UsageIngestOptions): void {
  const now = options.now ?? Date.now
  app.post(USAGE_INGEST_PATH, { config: { publicRoute: true }, bodyLimit: USAGE_BODY_LIMIT_BYTES }, async (request, reply) => {
    if (!sameToken(request.headers.authorization, options.gatewayToken)) {
      return reply.code(401).send({ error: { message: 'A valid gateway token is required', type: 'authentication_error', param: null, code: 'invalid_gateway_token' } })
    }
    const batch = usageBatch.safeParse(request.body)
    if (!batch.success) {
      return reply.code(400).send({ error: { message: 'the body must be {"records": [...]} with 1 to 1000 records', type: 'invalid_request_error', param: 'records', code: 'invalid_parameter' } })
    }
    const { records, rejected } = checkRecords(batch.data.records, now())
    let outcome
    try {
      outcome = await options.store.usageLogs.ingest(records)
    } catch (error) {
      request.log.error({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, 'storing usage records failed')
      return reply.code(503).header('retry-after', '2').send({ error: { message: 'the usage store is unavailable; retry shortly', type: 'service_unavailable_error', param: null, code: 'dependency_unavailable' } })
    }
    const result: UsageIngestResult = { ...outcome, rejected }
    return result
  })
}

/**
 * Embedded mode's delivery: the same validation and the same store write as the ingest route, in
 * process (the gateway's shipper, spool and batching are unchanged; only the hop is gone). It takes
 * the batch as the shipper hands it to any transport, each record serialised on its own (the
 * gateway's UsageBatch, typed here by what is read of it: the gateway is reached through its contract).
 */
export function inProcessUsageTransport(store: Store, now: () => number = Date.now): (batch: { lines(): string[] }) => Promise<void> {
  return async (batch) => {
    await store.usageLogs.ingest(checkRecords(batch.lines().map((line) => JSON.parse(line) as unknown), now()).records)
  }
}
