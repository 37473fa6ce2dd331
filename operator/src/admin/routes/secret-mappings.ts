/**
 * `secret_mappings` on integrations and providers: a credential or option field whose value is
 * read from a secret reference when snapshots are compiled, instead of being stored.
 */
import { z } from 'zod'
import { invalid } from '../../errors.ts'
import type { SecretMapping } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'

export const secretMappingsSchema = z.array(z.strictObject({
  target_field: z.string().min(1).max(128).regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'target_field is a field name such as key or aws_secret_access_key'),
  secret_reference_id: z.string().min(1).max(255),
  secret_key: z.string().min(1).max(255).nullable().optional(),
  value_format: z.enum(['string', 'json']).optional(),
})).max(32)

/**
 * Checks every mapping names an existing reference shared with `workspaceId` (null: organisation
 * wide, any reference) and stores the reference's id (a slug may have been given).
 */
export async function checkSecretMappings(
  ctx: AdminContext,
  organizationId: string,
  mappings: z.infer<typeof secretMappingsSchema>,
  workspaceId: string | null,
): Promise<SecretMapping[]> {
  const out: SecretMapping[] = []
  const seen = new Set<string>()
  for (const [index, mapping] of mappings.entries()) {
    const param = `secret_mappings[${index}]`
    if (seen.has(mapping.target_field)) throw invalid(`${param}.target_field`, `${param}.target_field: ${mapping.target_field} is mapped twice`)
    seen.add(mapping.target_field)
    const reference = await ctx.store.secretReferences.get(organizationId, mapping.secret_reference_id)
    if (!reference) throw invalid(`${param}.secret_reference_id`, `${param}.secret_reference_id: secret reference not found`)
    if (workspaceId !== null && !reference.allowAllWorkspaces && !reference.allowedWorkspaceIds.includes(workspaceId)) {
      throw invalid(`${param}.secret_reference_id`, `${param}.secret_reference_id: secret reference ${reference.slug} is not shared with this workspace`)
    }
    out.push({
      target_field: mapping.target_field,
      secret_reference_id: reference.id,
      ...(mapping.secret_key ? { secret_key: mapping.secret_key } : {}),
      ...(mapping.value_format ? { value_format: mapping.value_format } : {}),
    })
  }
  return out
}
