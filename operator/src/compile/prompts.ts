/**
 * The snapshot's prompts: for each active prompt, its published version and every labelled one
 * (label names resolved), and each active partial's published text. Other versions stay in the
 * store: a gateway serves only what was published or labelled.
 */
import type { SnapshotPrompt, SnapshotPromptPartial } from '@gatehouse/gateway/snapshot'
import type { Store } from '../store/index.ts'

export async function compilePrompts(store: Store, organizationId: string, inScope: (workspaceId: string) => boolean): Promise<{ prompts: SnapshotPrompt[]; promptPartials: SnapshotPromptPartial[] }> {
  const [prompts, versions, labels, partials] = await Promise.all([
    store.prompts.listAll(organizationId),
    store.prompts.servedVersions(organizationId),
    store.promptLabels.list(organizationId, null),
    store.promptPartials.published(organizationId),
  ])
  const labelNames = new Map(labels.map((label) => [label.id, label.name]))
  const byPrompt = new Map<string, typeof versions>()
  for (const version of versions) byPrompt.set(version.promptId, [...(byPrompt.get(version.promptId) ?? []), version])
  return {
    prompts: prompts.filter((p) => p.status === 'active' && inScope(p.workspaceId)).map((prompt) => ({
      id: prompt.id,
      slug: prompt.slug,
      name: prompt.name,
      workspaceId: prompt.workspaceId,
      virtualKey: prompt.virtualKey,
      defaultVersionId: prompt.defaultVersionId,
      versions: (byPrompt.get(prompt.id) ?? []).map((version) => {
        const label = version.labelId === null ? undefined : labelNames.get(version.labelId)
        return {
          id: version.id,
          version: version.version,
          template: version.template,
          parameters: version.parameters,
          model: version.model,
          tools: version.tools,
          functions: version.functions,
          toolChoice: version.toolChoice ?? null,
          isRawTemplate: version.isRawTemplate,
          labels: label === undefined ? [] : [label],
        }
      }),
    })),
    promptPartials: partials.filter(({ partial }) => inScope(partial.workspaceId)).map(({ partial, version }) => ({
      id: partial.id,
      slug: partial.slug,
      name: partial.name,
      workspaceId: partial.workspaceId,
      version: version.version,
      template: version.template,
    })),
  }
}
