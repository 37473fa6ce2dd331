/**
 * What MCP integrations and servers share in their capability listings: the 1-based `page` and
 * `page_size` the reference gives these routes, per-kind counts, and the bulk switch body.
 */
import { z } from 'zod'
import type { McpCapability, McpCapabilityType } from '../../store/index.ts'

const CAPABILITY_TYPES = ['tool', 'prompt', 'resource', 'resource_template', 'skill'] as const

/** `page` (1-based, default 1), `page_size` (default 100), optional `type` and `search`. */
export const onePagedQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(1000).default(100),
  type: z.enum(CAPABILITY_TYPES).optional(),
  search: z.string().max(255).optional(),
}).loose()

export type OnePagedQuery = z.infer<typeof onePagedQuery>

export const capabilityUpdateSchema = z.strictObject({
  capabilities: z.array(z.strictObject({ name: z.string().min(1).max(512), type: z.enum(CAPABILITY_TYPES), enabled: z.boolean() })).min(1).max(2000),
})

export function capabilityPage<T>(items: readonly T[], query: Pick<OnePagedQuery, 'page' | 'page_size'>): { data: T[]; total: number; has_more: boolean } {
  const start = (query.page - 1) * query.page_size
  return { data: items.slice(start, start + query.page_size), total: items.length, has_more: start + query.page_size < items.length }
}

const COUNT_KEYS: Record<McpCapabilityType, string> = { tool: 'tools', prompt: 'prompts', resource: 'resources', resource_template: 'resource_templates', skill: 'skills' }

export function capabilityCounts(capabilities: readonly Pick<McpCapability, 'type' | 'enabled'>[]): Record<string, { total: number; enabled: number }> {
  const counts = Object.fromEntries(Object.values(COUNT_KEYS).map((key) => [key, { total: 0, enabled: 0 }])) as Record<string, { total: number; enabled: number }>
  for (const capability of capabilities) {
    const count = counts[COUNT_KEYS[capability.type]]!
    count.total++
    if (capability.enabled) count.enabled++
  }
  return counts
}
