/**
 * Reads resources YAML files for embedded mode: the same shapes as the CRDs (apiVersion
 * gatehouse.dev/v1alpha1), plus plain `v1/Secret` objects that Providers reference. Every problem
 * names the file, the object and the field, and stops the start.
 */
import { readFile } from 'node:fs/promises'
import { parseAllDocuments } from 'yaml'
import { parseResource } from '@gatehouse/crds'
import { ResourceError, type SecretKeyReference, type SourcedResource } from './apply.ts'

export interface LoadedFiles {
  resources: SourcedResource[]
  /** `${secretName}/${key}` -> value, from v1/Secret objects (data is base64, stringData plain). */
  secrets: Map<string, string>
}

/** The environment variable that stands in for a Secret that is not in the files. */
export function secretEnvName(reference: SecretKeyReference): string {
  return `GATEHOUSE_SECRET_${reference.name}_${reference.key}`.toUpperCase().replace(/[^A-Z0-9]/g, '_')
}

function describeObject(value: unknown, index: number): string {
  const object = value as { kind?: unknown; metadata?: { name?: unknown } } | null
  const kind = typeof object?.kind === 'string' ? object.kind : 'object'
  const name = typeof object?.metadata?.name === 'string' ? object.metadata.name : `#${index + 1}`
  return `${kind}/${name}`
}

function addSecret(secrets: Map<string, string>, source: string, value: Record<string, unknown>, index: number): void {
  const label = describeObject(value, index)
  const name = (value.metadata as { name?: unknown } | undefined)?.name
  if (typeof name !== 'string' || name === '') throw new ResourceError(source, label, 'metadata.name', 'a Secret needs a name')
  for (const [field, encoded] of [['data', true], ['stringData', false]] as const) {
    const entries = value[field]
    if (entries === undefined) continue
    if (typeof entries !== 'object' || entries === null) throw new ResourceError(source, label, field, 'must be a map of strings')
    for (const [key, item] of Object.entries(entries)) {
      if (typeof item !== 'string') throw new ResourceError(source, label, `${field}.${key}`, 'must be a string')
      secrets.set(`${name}/${key}`, encoded ? Buffer.from(item, 'base64').toString('utf8') : item)
    }
  }
}

export async function loadResourceFiles(paths: readonly string[]): Promise<LoadedFiles> {
  const resources: SourcedResource[] = []
  const secrets = new Map<string, string>()
  for (const path of paths) {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (error) {
      throw new ResourceError(path, '(file)', '(file)', `cannot read: ${(error as Error).message}`)
    }
    const documents = parseAllDocuments(text)
    for (const [index, document] of documents.entries()) {
      if (document.errors.length > 0) {
        const first = document.errors[0]!
        const line = first.linePos?.[0]
        throw new ResourceError(path, `document #${index + 1}`, line ? `line ${line.line}, column ${line.col}` : '(yaml)', first.message.split('\n')[0] ?? 'invalid YAML')
      }
      const value = document.toJS() as unknown
      if (value === null || value === undefined) continue
      if (typeof value !== 'object' || Array.isArray(value)) throw new ResourceError(path, `document #${index + 1}`, '(root)', 'a resource must be a mapping')
      const object = value as Record<string, unknown>
      if (object.apiVersion === 'v1' && object.kind === 'Secret') {
        addSecret(secrets, path, object, index)
        continue
      }
      const parsed = parseResource(object)
      if (!parsed.ok) {
        const problem = parsed.problems[0]!
        throw new ResourceError(path, describeObject(object, index), problem.path || '(root)', problem.message)
      }
      resources.push({ resource: parsed.resource, source: path })
    }
  }
  const seen = new Set<string>()
  for (const { resource, source } of resources) {
    const identity = `${resource.kind}/${resource.metadata.name}`
    if (seen.has(identity)) throw new ResourceError(source, identity, 'metadata.name', 'declared more than once')
    seen.add(identity)
  }
  return { resources, secrets }
}

/** Secrets from the files first, then the environment variable named by `secretEnvName`. */
export function fileSecretResolver(files: LoadedFiles, env: NodeJS.ProcessEnv): {
  resolveSecret: (reference: SecretKeyReference) => string | null
  describeMissingSecret: (reference: SecretKeyReference) => string
} {
  return {
    resolveSecret: (reference) => files.secrets.get(`${reference.name}/${reference.key}`) ?? env[secretEnvName(reference)] ?? null,
    describeMissingSecret: (reference) =>
      `no v1/Secret '${reference.name}' with key '${reference.key}' in the resources files, and environment variable ${secretEnvName(reference)} is not set`,
  }
}
