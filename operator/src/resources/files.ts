/**
 * Reads resources YAML files for embedded mode: the same shapes as the CRDs (apiVersion
 * gatehouse.dev/v1alpha1), plus plain `v1/Secret` objects that Providers reference. Reading never
 * stops at the first problem: every one is collected with its file, line, object and field, so
 * `gatehouse validate` can list them all and a start can refuse with the first.
 */
import { readFile } from 'node:fs/promises'
import { LineCounter, parseAllDocuments, type Document } from 'yaml'
import { parseResource } from '@gatehouse/crds'
import { ResourceError, type SecretKeyReference, type SourcedResource } from './apply.ts'

export interface LoadedFiles {
  resources: SourcedResource[]
  /** `${secretName}/${key}` -> value, from v1/Secret objects (data is base64, stringData plain). */
  secrets: Map<string, string>
}

/** One problem in the resources files; `line` and `column` are 1-based, null when unknown. */
export interface FileProblem {
  file: string
  line: number | null
  column: number | null
  /** `Kind/name`, `document #N`, or '' for the file itself. */
  object: string
  /** Dotted field path, or '' for the object or file itself. */
  field: string
  message: string
}

export interface ReadFiles extends LoadedFiles {
  problems: FileProblem[]
  /** Where a field of a loaded resource is written (its deepest existing ancestor when absent). */
  locate(item: SourcedResource, field: string): { line: number | null; column: number | null }
}

/** `file:line:column: object: field: message`, leaving out the parts a problem does not have. */
export function formatProblem(problem: FileProblem): string {
  const where = problem.line === null ? problem.file : `${problem.file}:${problem.line}:${problem.column ?? 1}`
  return [where, problem.object, problem.field, problem.message].filter((part) => part !== '').join(': ')
}

/** The start refuses with the first problem; its message carries the line. */
export function problemError(problem: FileProblem): ResourceError {
  const source = problem.line === null ? problem.file : `${problem.file}:${problem.line}:${problem.column ?? 1}`
  return new ResourceError(source, problem.object, problem.field, problem.message)
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

/** `spec.targets[0].weight` -> ['spec', 'targets', 0, 'weight']. */
function pathSegments(field: string): Array<string | number> {
  const segments: Array<string | number> = []
  for (const match of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) segments.push(match[2] === undefined ? match[1]! : Number(match[2]))
  return segments
}

/** One parsed YAML document with the means to turn a field path into a position. */
interface Located {
  document: Document
  counter: LineCounter
}

function position(located: Located, field: string): { line: number | null; column: number | null } {
  const segments = pathSegments(field)
  // A missing field (a required one left out) is reported where its closest parent is written.
  for (let length = segments.length; length >= 0; length -= 1) {
    const node = located.document.getIn(segments.slice(0, length), true) as { range?: [number, number, number] } | undefined
    if (node?.range) {
      const { line, col } = located.counter.linePos(node.range[0])
      return { line, column: col }
    }
  }
  const { line, col } = located.counter.linePos(located.document.range?.[0] ?? 0)
  return { line, column: col }
}

function readSecret(
  value: Record<string, unknown>,
  report: (field: string, message: string) => void,
  secrets: Map<string, string>,
): void {
  const name = (value.metadata as { name?: unknown } | undefined)?.name
  if (typeof name !== 'string' || name === '') {
    report('metadata.name', 'a Secret needs a name')
    return
  }
  for (const [field, encoded] of [['data', true], ['stringData', false]] as const) {
    const entries = value[field]
    if (entries === undefined) continue
    if (typeof entries !== 'object' || entries === null) {
      report(field, 'must be a map of strings')
      continue
    }
    for (const [key, item] of Object.entries(entries)) {
      if (typeof item !== 'string') report(`${field}.${key}`, 'must be a string')
      else secrets.set(`${name}/${key}`, encoded ? Buffer.from(item, 'base64').toString('utf8') : item)
    }
  }
}

/** yaml's messages end with " at line N, column M:" and a snippet; the position is reported apart. */
function yamlMessage(message: string): string {
  return (message.split('\n')[0] ?? 'invalid YAML').replace(/ at line \d+, column \d+:?$/, '')
}

/** Reads every file and collects every problem (syntax, shape, duplicates); references are checked apart. */
export async function readResourceFiles(paths: readonly string[]): Promise<ReadFiles> {
  const resources: SourcedResource[] = []
  const secrets = new Map<string, string>()
  const problems: FileProblem[] = []
  const located = new WeakMap<SourcedResource['resource'], Located>()
  for (const path of paths) {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message
      problems.push({ file: path, line: null, column: null, object: '', field: '', message: `cannot read the file: ${why}` })
      continue
    }
    const counter = new LineCounter()
    const documents = parseAllDocuments(text, { lineCounter: counter })
    for (const [index, document] of documents.entries()) {
      const here = { document, counter }
      if (document.errors.length > 0) {
        // Only the first syntax error of a document: the rest are usually its echoes.
        const first = document.errors[0]!
        const { line, col } = counter.linePos(first.pos[0])
        problems.push({ file: path, line, column: col, object: `document #${index + 1}`, field: '', message: yamlMessage(first.message) })
        continue
      }
      const value = document.toJS() as unknown
      if (value === null || value === undefined) continue
      const report = (object: string, field: string, message: string): void => {
        problems.push({ file: path, ...position(here, field), object, field, message })
      }
      if (typeof value !== 'object' || Array.isArray(value)) {
        report(`document #${index + 1}`, '', 'a resource must be a mapping')
        continue
      }
      const object = value as Record<string, unknown>
      const label = describeObject(object, index)
      if (object.apiVersion === 'v1' && object.kind === 'Secret') {
        readSecret(object, (field, message) => report(label, field, message), secrets)
        continue
      }
      const parsed = parseResource(object)
      if (!parsed.ok) {
        for (const problem of parsed.problems) report(label, problem.path, problem.message)
        continue
      }
      const item = { resource: parsed.resource, source: path }
      located.set(parsed.resource, here)
      resources.push(item)
    }
  }
  const locate = (item: SourcedResource, field: string): { line: number | null; column: number | null } => {
    const here = located.get(item.resource)
    return here ? position(here, field) : { line: null, column: null }
  }
  const seen = new Map<string, SourcedResource>()
  for (const item of resources) {
    const identity = `${item.resource.kind}/${item.resource.metadata.name}`
    const first = seen.get(identity)
    if (first) {
      const firstAt = locate(first, 'metadata.name')
      problems.push({ file: item.source, ...locate(item, 'metadata.name'), object: identity, field: 'metadata.name', message: `declared more than once (first in ${first.source}${firstAt.line === null ? '' : `:${firstAt.line}`})` })
    } else {
      seen.set(identity, item)
    }
  }
  return { resources, secrets, problems, locate }
}

/** Reads the files for a start: the first problem stops it (`gatehouse validate` lists them all). */
export async function loadResourceFiles(paths: readonly string[]): Promise<LoadedFiles> {
  const read = await readResourceFiles(paths)
  if (read.problems.length > 0) throw problemError(read.problems[0]!)
  return { resources: read.resources, secrets: read.secrets }
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
