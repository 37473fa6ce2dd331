/**
 * `default.requestParamsCheck`: which tools and parameters a request may carry.
 * - tools: `blockedTypes`/`allowedTypes` (tool `type`, such as function or web_search) and
 *   `blockedFunctionNames`/`allowedFunctionNames` (function tools by name);
 * - params: `blockedKeys`/`allowedKeys` (top-level body fields; `model`, `messages`, `prompt`,
 *   `input` and `stream` are always allowed), and `values` with per-key `blockedValues` and
 *   `allowedValues`.
 */
import { z } from 'zod'
import { defineCheck, inline } from './check.ts'

const names = z.array(z.string().min(1)).min(1).optional()
const scalar = z.union([z.string(), z.number(), z.boolean()])

const ALWAYS_ALLOWED = new Set(['model', 'messages', 'prompt', 'input', 'stream', 'system', 'max_tokens'])

function toolName(tool: Record<string, unknown>): string | null {
  const fn = tool.function as Record<string, unknown> | undefined
  if (fn && typeof fn.name === 'string') return fn.name
  return typeof tool.name === 'string' ? tool.name : null
}

export const requestParamsCheck = defineCheck({
  id: 'default.requestParamsCheck',
  parameters: z.object({
    tools: z.object({ blockedTypes: names, allowedTypes: names, blockedFunctionNames: names, allowedFunctionNames: names }).optional(),
    params: z
      .object({
        blockedKeys: names,
        allowedKeys: names,
        values: z.record(z.string().min(1), z.object({ blockedValues: z.array(scalar).optional(), allowedValues: z.array(scalar).optional() })).optional(),
      })
      .optional(),
  }).refine((p) => p.tools !== undefined || p.params !== undefined, 'give tools or params'),
  compile({ tools, params }) {
    const set = (list: readonly unknown[] | undefined) => (list ? new Set(list) : null)
    const blockedTypes = set(tools?.blockedTypes)
    const allowedTypes = set(tools?.allowedTypes)
    const blockedNames = set(tools?.blockedFunctionNames)
    const allowedNames = set(tools?.allowedFunctionNames)
    const blockedKeys = set(params?.blockedKeys)
    const allowedKeys = set(params?.allowedKeys)
    const values = Object.entries(params?.values ?? {}).map(([key, rule]) => ({ key, blocked: set(rule.blockedValues), allowed: set(rule.allowedValues) }))
    return inline(({ body }) => {
      const problems: string[] = []
      const requestTools = Array.isArray(body?.tools) ? (body.tools as Array<Record<string, unknown>>) : []
      for (const tool of requestTools) {
        const type = typeof tool.type === 'string' ? tool.type : 'function'
        if (blockedTypes?.has(type) || (allowedTypes && !allowedTypes.has(type))) problems.push(`tool type ${type}`)
        const name = toolName(tool)
        if (name !== null && (blockedNames?.has(name) || (allowedNames && !allowedNames.has(name)))) problems.push(`function ${name}`)
      }
      for (const key of Object.keys(body ?? {})) {
        if (ALWAYS_ALLOWED.has(key)) continue
        if (blockedKeys?.has(key) || (allowedKeys && !allowedKeys.has(key))) problems.push(`parameter ${key}`)
      }
      for (const rule of values) {
        if (!body || !Object.hasOwn(body, rule.key)) continue
        const value = body[rule.key]
        if (rule.blocked?.has(value) || (rule.allowed && !rule.allowed.has(value))) problems.push(`${rule.key}=${JSON.stringify(value)}`)
      }
      return problems.length === 0 ? { verdict: true, explanation: 'tools and parameters are allowed' } : { verdict: false, explanation: `not allowed: ${problems.join(', ')}` }
    })
  },
})
