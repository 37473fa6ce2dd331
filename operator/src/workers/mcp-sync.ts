/**
 * MCP and agent sync worker: re-reads every active MCP integration's server (initialize and its
 * lists) and every agent integration's agent card once per interval (GATEHOUSE_MCP_SYNC_INTERVAL_SECONDS, default 300). Every replica runs it; a replica
 * syncs only the integrations it claimed (`claimDue`, SKIP LOCKED with a lease), so each server is
 * read once per interval whatever the number of replicas, and a replica that dies mid-sync leaves
 * its claim to expire.
 */
import type { Clock } from '../clock.ts'
import { fetchAgentCard } from '../agents/card.ts'
import { readMcpServer, syncIntegration } from '../mcp/sync-integration.ts'
import type { Store } from '../store/index.ts'
import { startInterval, type WorkerErrorHandler } from './interval.ts'

export const DEFAULT_MCP_SYNC_INTERVAL_MS = 300_000
/** How long a claim holds: longer than one sync can take (its timeout), short enough to recover from a dead replica. */
const CLAIM_LEASE_MS = 120_000
/** Integrations synced per run (at most), a few at a time. */
const BATCH = 20
const CONCURRENCY = 4

export interface McpSyncWorkerOptions {
  store: Store
  clock: Clock
  /** How old a sync may get before it is redone. */
  syncIntervalMs?: number
  /** How often the worker looks for due integrations. */
  pollIntervalMs?: number
  onError?: WorkerErrorHandler
}

export function mcpSyncIntervalFromEnv(env: NodeJS.ProcessEnv): number {
  const seconds = Number(env.GATEHOUSE_MCP_SYNC_INTERVAL_SECONDS)
  return Number.isFinite(seconds) && seconds >= 1 ? seconds * 1000 : DEFAULT_MCP_SYNC_INTERVAL_MS
}

export function createMcpSyncWorker(options: McpSyncWorkerOptions): { runOnce(): Promise<string[]>; start(): () => void } {
  const { store, clock } = options
  const syncIntervalMs = options.syncIntervalMs ?? DEFAULT_MCP_SYNC_INTERVAL_MS
  const families = [
    { repository: store.mcpIntegrations, read: readMcpServer },
    { repository: store.agentIntegrations, read: fetchAgentCard },
  ]
  async function runOnce(): Promise<string[]> {
    const queue: Array<() => Promise<unknown>> = []
    const synced: string[] = []
    for (const { repository, read } of families) {
      for (const due of await repository.claimDue(clock(), syncIntervalMs, CLAIM_LEASE_MS, BATCH)) {
        queue.push(async () => {
          await syncIntegration(store, repository, read, due.organizationId, due.id, clock)
          synced.push(due.id)
        })
      }
    }
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await next()
    }))
    return synced
  }
  const pollIntervalMs = options.pollIntervalMs ?? Math.min(30_000, syncIntervalMs)
  return { runOnce, start: () => startInterval(runOnce, pollIntervalMs, options.onError) }
}
