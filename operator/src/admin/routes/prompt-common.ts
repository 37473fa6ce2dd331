/**
 * Shared by the prompt, partial, label and collection route modules: the template field, which
 * workspace a prompt request acts in, and the workspaces a prompt listing covers.
 */
import { PROMPT_TEMPLATE_MAX_CHARS, promptTemplateIssues } from '@gatehouse/gateway/snapshot'
import { z } from 'zod'
import { forbidden, invalid } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { AdminContext } from '../context.ts'
import { mayPrompt, type PromptScopeAction } from './prompt-access.ts'
import { listWorkspaces } from './resource-access.ts'

/** A template: Mustache text, or a JSON array of chat messages whose strings are Mustache text. */
export const templateSchema = z.string().min(1).max(PROMPT_TEMPLATE_MAX_CHARS)

/** A Mustache syntax error is a 400 naming the field; nothing is stored. A raw template is one text. */
export function checkTemplate(template: string, param: string, raw = false): void {
  const issue = promptTemplateIssues(template, raw)[0]
  if (issue !== undefined) throw invalid(param, `${param}: ${issue}`)
}

/** `0|1` on write (and booleans from newer clients). */
export const flagSchema = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((value) => value === true || value === 1)

/**
 * The workspaces a prompt listing covers (the named one, or every one the principal sees) that the
 * principal may `action` prompts in; 403 when it may in none of them. null: every workspace.
 */
export async function promptWorkspaces(ctx: AdminContext, principal: Principal, reference: string | undefined, action: PromptScopeAction): Promise<string[] | null> {
  const candidates = await listWorkspaces(ctx, principal, reference)
  if (candidates === undefined) {
    if (!principal.has(`prompts.${action}`, null)) throw forbidden(`this credential may not ${action} prompts`)
    return null
  }
  const allowed: string[] = []
  for (const workspaceId of candidates) if (await mayPrompt(ctx, principal, workspaceId, action)) allowed.push(workspaceId)
  if (allowed.length === 0) throw forbidden(`this credential may not ${action} prompts ${reference ? 'in that workspace' : 'in any workspace'} (organisation prompt settings)`)
  return allowed
}
