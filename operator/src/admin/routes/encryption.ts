/**
 * Encryption-key rotation for credentials at rest: /v1/admin/encryption.
 *   GET  -> the primary key id and how many rows are still sealed under another key
 *   POST /reseal -> re-seals those rows under the primary key (idempotent)
 * Rotation: put the new key first in GATEHOUSE_ENCRYPTION_KEY (keeping the old one after it),
 * restart, call reseal, then drop the old key. Organisation settings permission (owners, admins).
 */
import type { FastifyInstance } from 'fastify'
import { requireCapability } from '../../identity/capabilities.ts'
import type { ResealReport } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, principalOf } from '../http.ts'

function view(report: ResealReport): Record<string, unknown> {
  return { primary_key_id: report.primaryKeyId, resealed: report.resealed, stale: report.stale, object: 'encryption-status' }
}

export function encryptionRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', async (request) => {
    requireCapability(principalOf(request), 'organisation_settings', 'read')
    return view(await ctx.store.credentials.status())
  })

  app.post('/reseal', async (request) => {
    requireCapability(principalOf(request), 'organisation_settings', 'update')
    const report = await ctx.store.credentials.reseal()
    audit(request, { action: 'encryption.reseal', resourceType: 'encryption', details: { primary_key_id: report.primaryKeyId, resealed: report.resealed } })
    return view(report)
  })
}
