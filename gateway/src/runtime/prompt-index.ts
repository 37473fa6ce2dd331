/**
 * The snapshot's prompts and partials indexed per workspace, built once per runtime on first use,
 * so a prompt request is two map lookups before it renders. A prompt is found by id or slug; a
 * partial (`{{>name}}`) by name, slug or id, always in the caller's workspace.
 */
import { GatewayError } from '../core/errors.ts'
import { selectPromptVersion, splitPromptReference, type PartialLookup, type SnapshotPrompt, type SnapshotPromptVersion } from '../snapshot/prompts.ts'
import type { GatewaySnapshot } from '../snapshot/schema.ts'
import type { RuntimeConfig } from './compile.ts'

interface PromptIndex {
  /** `${workspaceId}/${id or slug}` */
  readonly prompts: ReadonlyMap<string, SnapshotPrompt>
  /** `${workspaceId}/${name, slug or id}` -> published template */
  readonly partials: ReadonlyMap<string, string>
}

const indexes = new WeakMap<GatewaySnapshot, PromptIndex>()

function indexOf(snapshot: GatewaySnapshot): PromptIndex {
  const cached = indexes.get(snapshot)
  if (cached) return cached
  const prompts = new Map<string, SnapshotPrompt>()
  for (const prompt of snapshot.prompts) {
    prompts.set(`${prompt.workspaceId}/${prompt.slug}`, prompt)
    prompts.set(`${prompt.workspaceId}/${prompt.id}`, prompt)
  }
  const partials = new Map<string, string>()
  for (const partial of snapshot.promptPartials) {
    for (const name of [partial.id, partial.slug, partial.name]) partials.set(`${partial.workspaceId}/${name}`, partial.template)
  }
  const index = { prompts, partials }
  indexes.set(snapshot, index)
  return index
}

export interface ResolvedPrompt {
  readonly prompt: SnapshotPrompt
  readonly version: SnapshotPromptVersion
  readonly partials: PartialLookup
}

/**
 * The prompt and version a path reference names in the workspace (`id`, `slug`, `slug@3`,
 * `slug@production`); 404 naming what was missing.
 */
export function resolvePrompt(runtime: RuntimeConfig, workspaceId: string, reference: string): ResolvedPrompt {
  const index = indexOf(runtime.snapshot)
  const { prompt: name, selector } = splitPromptReference(reference)
  const prompt = index.prompts.get(`${workspaceId}/${name}`)
  if (!prompt) throw new GatewayError('not_found', `No prompt '${name}' in this workspace`, { param: 'promptId' })
  const version = selectPromptVersion(prompt, selector)
  if (!version) {
    throw new GatewayError('not_found', selector === null
      ? `Prompt '${name}' has no published version`
      : `Prompt '${name}' has no published or labelled version '${selector}'`, { param: 'promptId' })
  }
  return { prompt, version, partials: (reference) => index.partials.get(`${workspaceId}/${reference}`) }
}
