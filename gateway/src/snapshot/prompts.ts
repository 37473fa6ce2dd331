/**
 * Saved prompts in the snapshot, and the one module that renders them: the gateway's `render` and
 * `completions` routes render with it, and the control plane checks templates with it before it
 * stores them, so both sides agree on what a template means.
 *
 * A template (`string`) is either a JSON array of chat messages, whose string values are Mustache
 * templates (`[{"role":"system","content":"You are {{persona}}"}]`), or plain Mustache text, which
 * becomes one user message. Variables are never HTML-escaped. `{{>name}}` includes the published
 * version of the workspace's partial of that name (or slug, or id). Every variable a template
 * names outside a section (`{{name}}`, `{{{name}}}`, `{{&name}}`, in included partials too) must
 * be given: Mustache would render a missing one as empty text, which hides mistakes, so a missing
 * one is a 400 naming it. Sections (`{{#x}}…{{/x}}`, `{{^x}}…{{/x}}`) are optional by nature.
 *
 * A raw template (`isRawTemplate`) is one Mustache text, whatever it looks like, and renders to a
 * text completions request (`prompt`) instead of a chat one; variables and partials work alike.
 */
import Mustache from 'mustache'
import { z } from 'zod'
import { GatewayError, invalidParameter } from '../core/errors.ts'

const id = z.string().min(1).max(255)
/** Prompt templates and partials are at most this long (characters). */
export const PROMPT_TEMPLATE_MAX_CHARS = 256 * 1024
/** Partials may include partials, this deep at most (a cycle ends here with a 400). */
const PARTIAL_DEPTH_MAX = 8

export const snapshotPromptVersion = z.object({
  id,
  version: z.number().int().min(1),
  template: z.string().max(PROMPT_TEMPLATE_MAX_CHARS),
  /** Model parameters (temperature, max_tokens, ...); the request's root fields override them. */
  parameters: z.record(z.string(), z.unknown()).default({}),
  model: z.string().max(512).nullable().default(null),
  tools: z.array(z.unknown()).nullable().default(null),
  functions: z.array(z.unknown()).nullable().default(null),
  toolChoice: z.unknown().optional(),
  /** The template is one text that renders to a text completion's `prompt`, not chat messages. */
  isRawTemplate: z.boolean().default(false),
  /** The names of the labels pointing at this version (`production`, `staging`, custom). */
  labels: z.array(z.string().min(1).max(255)).default([]),
})

export const snapshotPrompt = z.object({
  id,
  slug: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  workspaceId: id,
  /** The provider slug completions go to when neither the request nor a config names one. */
  virtualKey: z.string().min(1).max(255).nullable().default(null),
  /** The published version, used when the request names no version or label. */
  defaultVersionId: id.nullable().default(null),
  /** The published version and every labelled one (other versions are not served). */
  versions: z.array(snapshotPromptVersion),
})

export const snapshotPromptPartial = z.object({
  id,
  slug: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  workspaceId: id,
  version: z.number().int().min(1),
  /** The published version's text. */
  template: z.string().max(PROMPT_TEMPLATE_MAX_CHARS),
})

export type SnapshotPrompt = z.infer<typeof snapshotPrompt>
export type SnapshotPromptVersion = z.infer<typeof snapshotPromptVersion>
export type SnapshotPromptPartial = z.infer<typeof snapshotPromptPartial>

/** Finds a partial by name, slug or id (the workspace's partials). */
export type PartialLookup = (reference: string) => string | undefined

type Token = [type: string, value: string, start: number, end: number, children?: Token[]]

function parseMustache(template: string, where: string): Token[] {
  try {
    return Mustache.parse(template) as unknown as Token[]
  } catch (error) {
    throw invalidParameter(where, `${where}: ${(error as Error).message}`)
  }
}

interface TemplateTexts {
  /** The messages array, never mutated (rendering copies it); null for plain text. */
  readonly messages: unknown[] | null
  readonly texts: string[]
}

/** Parsed templates by text: a snapshot's templates are parsed once, not on every request. */
const parsedTemplates = new Map<string, TemplateTexts>()
const PARSED_TEMPLATES_MAX = 1024

/** The Mustache texts of a template: each string value of a messages array, or the whole text (always, when raw). */
function templateTexts(template: string, raw: boolean): TemplateTexts {
  if (raw) return { messages: null, texts: [template] }
  const cached = parsedTemplates.get(template)
  if (cached) return cached
  const parsed = parseTemplateTexts(template)
  // Bounded: templates come from snapshots, so a full cache means old snapshots' texts; start over.
  if (parsedTemplates.size >= PARSED_TEMPLATES_MAX) parsedTemplates.clear()
  parsedTemplates.set(template, parsed)
  return parsed
}

function parseTemplateTexts(template: string): TemplateTexts {
  const trimmed = template.trimStart()
  if (trimmed.startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(template)
    } catch {
      parsed = null
    }
    if (Array.isArray(parsed) && parsed.every((m) => typeof m === 'object' && m !== null && typeof (m as { role?: unknown }).role === 'string')) {
      const texts: string[] = []
      collectStrings(parsed, texts)
      return { messages: parsed, texts }
    }
  }
  return { messages: null, texts: [template] }
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, out)
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) collectStrings(item, out)
}

/**
 * Problems with a template as the control plane stores it: Mustache syntax errors. Unknown
 * partials are reported at render time (a partial may be created after the prompt).
 */
export function promptTemplateIssues(template: string, raw = false): string[] {
  const issues: string[] = []
  for (const text of templateTexts(template, raw).texts) {
    try {
      Mustache.parse(text)
    } catch (error) {
      issues.push((error as Error).message)
    }
  }
  return issues
}

function hasPath(variables: Record<string, unknown>, name: string): boolean {
  if (name === '.') return true
  let value: unknown = variables
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return false
    value = (value as Record<string, unknown>)[part]
  }
  return value !== undefined
}

/** Names of variables used outside sections that `variables` lacks, partials included; checks partials exist. */
function missingVariables(tokens: Token[], variables: Record<string, unknown>, partials: PartialLookup, depth: number, missing: Set<string>): void {
  for (const [type, value] of tokens) {
    if ((type === 'name' || type === '&') && !hasPath(variables, value)) missing.add(value)
    if (type === '>') {
      const partial = partials(value)
      if (partial === undefined) throw invalidParameter('template', `The prompt uses the partial '${value}', which does not exist in this workspace`)
      if (depth >= PARTIAL_DEPTH_MAX) throw invalidParameter('template', `Partials nest deeper than ${PARTIAL_DEPTH_MAX} levels (is '${value}' including itself?)`)
      missingVariables(parseMustache(partial, `partial ${value}`), variables, partials, depth + 1, missing)
    }
  }
}

const NO_ESCAPE = { escape: (text: string): string => text }

/**
 * Mustache keeps every template text it ever parsed; a long-running gateway sees the texts of
 * every snapshot it served, so its cache is bounded the same way as ours.
 */
const mustacheParsed = new Map<string, string>()
Mustache.templateCache = {
  set(key: string, value: string): void {
    if (mustacheParsed.size >= PARSED_TEMPLATES_MAX) mustacheParsed.clear()
    mustacheParsed.set(key, value)
  },
  get: (key: string): string | undefined => mustacheParsed.get(key),
  clear: (): void => mustacheParsed.clear(),
}

/**
 * Renders each of `texts` (parts of one template) with `variables` and the workspace's partials.
 * Throws a 400 naming the first missing variable (`param: variables.<name>`) and listing all of
 * them, before anything is rendered.
 */
function renderer(texts: readonly string[], variables: Record<string, unknown>, partials: PartialLookup): (text: string) => string {
  const missing = new Set<string>()
  for (const text of texts) missingVariables(parseMustache(text, 'template'), variables, partials, 0, missing)
  if (missing.size > 0) {
    const names = [...missing]
    throw new GatewayError('missing_parameter', `Missing prompt variable${names.length > 1 ? 's' : ''}: ${names.join(', ')}`, { param: `variables.${names[0]}` })
  }
  return (text) => Mustache.render(text, variables, (name) => partials(name), NO_ESCAPE)
}

/** The messages a (chat) template renders to; see `renderer` for missing variables. */
export function renderPromptMessages(template: string, variables: Record<string, unknown>, partials: PartialLookup): unknown[] {
  const { messages, texts } = templateTexts(template, false)
  const render = renderer(texts, variables, partials)
  if (messages === null) return [{ role: 'user', content: render(template) }]
  return renderStrings(messages, render) as unknown[]
}

/** The `prompt` a raw template renders to: the whole template as one Mustache text. */
export function renderRawPrompt(template: string, variables: Record<string, unknown>, partials: PartialLookup): string {
  return renderer([template], variables, partials)(template)
}

function renderStrings(value: unknown, render: (text: string) => string): unknown {
  if (typeof value === 'string') return render(value)
  if (Array.isArray(value)) return value.map((item) => renderStrings(item, render))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderStrings(item, render)]))
  return value
}

/** Fields of a prompt request that are not chat parameters. */
const PROMPT_REQUEST_FIELDS = new Set(['variables'])

/**
 * The request a prompt version renders to: the version's model and parameters, then either the
 * rendered `prompt` (a raw template: a text completions request, which has no tools) or the
 * rendered messages with the version's tools and functions (a chat completions request), then
 * every root field of the request (other than `variables`) as an override.
 */
export function renderPromptRequest(version: SnapshotPromptVersion, request: Record<string, unknown>, partials: PartialLookup): Record<string, unknown> {
  const variables = request.variables ?? {}
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) throw invalidParameter('variables', "'variables' must be an object")
  const out: Record<string, unknown> = { ...version.parameters }
  if (version.model !== null) out.model = version.model
  if (version.isRawTemplate) {
    out.prompt = renderRawPrompt(version.template, variables as Record<string, unknown>, partials)
  } else {
    out.messages = renderPromptMessages(version.template, variables as Record<string, unknown>, partials)
    if (version.tools !== null) out.tools = version.tools
    if (version.functions !== null) out.functions = version.functions
    if (version.toolChoice !== undefined && version.toolChoice !== null) out.tool_choice = version.toolChoice
  }
  for (const [name, value] of Object.entries(request)) if (!PROMPT_REQUEST_FIELDS.has(name)) out[name] = value
  return out
}

/**
 * The version a prompt reference names: `prompt` alone (the published version), `prompt@3` (that
 * version number, if published or labelled), or `prompt@production` (the version with that label).
 */
export function splitPromptReference(reference: string): { prompt: string; selector: string | null } {
  const at = reference.lastIndexOf('@')
  if (at <= 0) return { prompt: reference, selector: null }
  return { prompt: reference.slice(0, at), selector: reference.slice(at + 1) }
}

export function selectPromptVersion(prompt: SnapshotPrompt, selector: string | null): SnapshotPromptVersion | undefined {
  if (selector === null || selector === '') return prompt.versions.find((v) => v.id === prompt.defaultVersionId)
  if (/^[0-9]{1,9}$/.test(selector)) return prompt.versions.find((v) => v.version === Number(selector))
  return prompt.versions.find((v) => v.id === selector || v.labels.includes(selector))
}
