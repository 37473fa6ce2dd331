/**
 * Graceful shutdown of a data-plane server. On SIGTERM a load balancer may still send traffic for
 * a few seconds, so the server first answers /readyz with 503 while it keeps serving for a drain
 * window (GATEHOUSE_SHUTDOWN_DELAY_MS), then stops accepting, lets requests in flight (streams
 * included) finish, and cuts what is left after GATEHOUSE_SHUTDOWN_TIMEOUT_MS.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'

export interface ShutdownSettings {
  /** How long readiness fails while everything is still served. */
  delayMs: number
  /** After the delay, how long requests in flight may take before their connections are cut. */
  drainTimeoutMs: number
}

export const DEFAULT_SHUTDOWN_DELAY_MS = 5_000
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000

function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 3_600_000) throw new Error(`${name} must be a whole number of milliseconds (0 to 3600000), got '${value}'`)
  return parsed
}

export function shutdownSettings(env: NodeJS.ProcessEnv): ShutdownSettings {
  return {
    delayMs: milliseconds(env, 'GATEHOUSE_SHUTDOWN_DELAY_MS', DEFAULT_SHUTDOWN_DELAY_MS),
    drainTimeoutMs: milliseconds(env, 'GATEHOUSE_SHUTDOWN_TIMEOUT_MS', DEFAULT_SHUTDOWN_TIMEOUT_MS),
  }
}

export interface ReadinessGate {
  readonly draining: boolean
  begin(): void
}

/** Makes /readyz answer 503 once draining begins; every other route is untouched. Call before listen. */
export function installReadinessGate(app: FastifyInstance): ReadinessGate {
  let draining = false
  app.addHook('onRequest', (request, reply, done) => {
    if (draining && request.url === '/readyz') {
      void reply.code(503).header('retry-after', '5').send({ status: 'not_ready', reason: 'shutting down' })
      return
    }
    done()
  })
  return {
    get draining() {
      return draining
    },
    begin() {
      draining = true
    },
  }
}

/** Fails readiness, waits the drain window, then closes and waits for requests in flight (bounded). */
export async function drainAndClose(app: FastifyInstance, gate: ReadinessGate, settings: ShutdownSettings): Promise<void> {
  gate.begin()
  if (settings.delayMs > 0) await sleep(settings.delayMs)
  const cut = setTimeout(() => app.server.closeAllConnections(), settings.drainTimeoutMs)
  try {
    await app.close()
  } finally {
    clearTimeout(cut)
  }
}
