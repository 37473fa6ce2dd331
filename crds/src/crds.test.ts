import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { renderCrdFiles } from '../scripts/render.ts'
import { crdManifests, parseResource } from './index.ts'
import { toStructural, type JsonSchema } from './openapi.ts'
import { z } from 'zod'
import { baseline, invalidCases, invalidObject } from './testdata/cases.ts'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

function openApiOf(crd: ReturnType<typeof crdManifests>[number]): JsonSchema {
  const versions = crd.spec.versions as Array<{ schema: { openAPIV3Schema: JsonSchema } }>
  return versions[0]!.schema.openAPIV3Schema
}

/** Every schema node below `node`, with its path. */
function* walk(node: JsonSchema, at: string): Generator<[string, JsonSchema]> {
  yield [at, node]
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
    yield* walk(child, `${at}.${name}`)
  }
  if (node.items) yield* walk(node.items as JsonSchema, `${at}[]`)
  if (typeof node.additionalProperties === 'object') yield* walk(node.additionalProperties as JsonSchema, `${at}{}`)
}

describe('generated CRD YAML', () => {
  for (const dir of ['crds/generated', 'charts/gatehouse/crds']) {
    it(`${dir} matches the schema source (run \`make crds\` when this fails)`, async () => {
      const expected = renderCrdFiles()
      const present = (await readdir(path.join(repoRoot, dir))).filter((f) => f.endsWith('.yaml')).sort()
      expect(present).toEqual([...expected.keys()].sort())
      const stale: string[] = []
      for (const [name, text] of expected) {
        if ((await readFile(path.join(repoRoot, dir, name), 'utf8')) !== text) stale.push(`${dir}/${name}`)
      }
      expect(stale).toEqual([])
    })
  }
})

describe('CRD schemas', () => {
  const crds = crdManifests()

  it('cover the seven kinds in gatehouse.dev/v1alpha1, namespaced, with status subresource', () => {
    expect(crds.map((c) => c.metadata.name)).toEqual([
      'workspaces.gatehouse.dev',
      'providers.gatehouse.dev',
      'configs.gatehouse.dev',
      'ratelimitpolicies.gatehouse.dev',
      'usagelimitpolicies.gatehouse.dev',
      'deployments.gatehouse.dev',
      'guardrails.gatehouse.dev',
    ])
    for (const crd of crds) {
      expect(crd.spec.scope).toBe('Namespaced')
      const [version] = crd.spec.versions as Array<Record<string, unknown>>
      expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } })
      const columns = (version!.additionalPrinterColumns as Array<{ name: string }>).map((c) => c.name)
      expect(columns).toEqual(expect.arrayContaining(['Ready', 'Age']))
    }
  })

  it('describe every property', () => {
    const missing: string[] = []
    for (const crd of crds) {
      for (const [at, node] of walk(openApiOf(crd), (crd.spec.names as { kind: string }).kind)) {
        for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
          // metadata is ObjectMeta: documented by Kubernetes, and a CRD may not describe it.
          if (node === openApiOf(crd) && name === 'metadata') continue
          if (typeof child.description !== 'string' || child.description.length < 3) missing.push(`${at}.${name}`)
        }
      }
    }
    expect(missing).toEqual([])
  })

  it('are structural: typed nodes, no composition keywords, bounded strings and lists', () => {
    const problems: string[] = []
    for (const crd of crds) {
      for (const [at, node] of walk(openApiOf(crd), (crd.spec.names as { kind: string }).kind)) {
        const free = node['x-kubernetes-preserve-unknown-fields'] === true
        if (!free && node.type === undefined) problems.push(`${at}: no type`)
        for (const key of ['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'const', 'uniqueItems']) {
          if (key in node) problems.push(`${at}: ${key}`)
        }
        if (node.properties && node.additionalProperties !== undefined) problems.push(`${at}: properties with additionalProperties`)
        if (at.includes('.metadata')) continue
        if (node.type === 'string' && node.maxLength === undefined && node.enum === undefined && node.format !== 'date-time') {
          problems.push(`${at}: string without maxLength`)
        }
        if (node.type === 'array' && node.maxItems === undefined) problems.push(`${at}: list without maxItems`)
      }
    }
    // apiVersion and kind are the standard unbounded strings of every Kubernetes object.
    expect(problems.filter((p) => !/\.(apiVersion|kind): string without maxLength$/.test(p))).toEqual([])
  })

  it('carry the CEL rules as x-kubernetes-validations', () => {
    const rules = crds.flatMap((crd) =>
      [...walk(openApiOf(crd), '')].flatMap(([, node]) => (node['x-kubernetes-validations'] as Array<{ rule: string }>) ?? []),
    )
    expect(rules.map((r) => r.rule)).toEqual(
      expect.arrayContaining([
        '!(has(self.periodicReset) && has(self.periodicResetDays))',
        "self.kind in ['ollama', 'vllm', 'lm-studio'] || has(self.secretRef)",
        '!(self.deny && self.async)',
        'self == oldSelf',
      ]),
    )
  })
})

describe('toStructural', () => {
  it('refuses what a structural schema cannot express instead of loosening it', () => {
    expect(() => toStructural(z.object({ a: z.union([z.string(), z.number()]).describe('A') }))).toThrow(/anyOf/)
    expect(() => toStructural(z.object({ m: z.record(z.string(), z.unknown()).describe('M') }))).toThrow(/freeForm/)
    expect(() => toStructural(z.object({ t: z.tuple([z.string()]).describe('T') }))).toThrow()
  })

  it('turns literals into enums, drops additionalProperties: false and keeps nullable', () => {
    const schema = toStructural(z.strictObject({ v: z.literal('x').describe('V'), n: z.string().max(3).nullable().describe('N') }))
    expect(schema).toEqual({
      type: 'object',
      properties: {
        v: { type: 'string', enum: ['x'], description: 'V' },
        n: { type: 'string', maxLength: 3, nullable: true, description: 'N' },
      },
      required: ['v', 'n'],
    })
  })
})

describe('parseResource (embedded mode)', () => {
  it('accepts every baseline object', () => {
    for (const [kind, make] of Object.entries(baseline)) {
      const result = parseResource(make())
      expect(result, kind).toMatchObject({ ok: true })
    }
  })

  it('accepts the examples in examples/k8s', async () => {
    const dir = path.join(repoRoot, 'examples/k8s')
    const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml'))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) {
      for (const doc of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) {
        const obj = doc.toJS() as { apiVersion?: string; kind?: string }
        if (obj.apiVersion !== 'gatehouse.dev/v1alpha1') continue
        const result = parseResource(obj)
        expect(result.ok ? 'ok' : result.problems, `${file} ${obj.kind}`).toBe('ok')
      }
    }
  })

  for (const c of invalidCases) {
    it(`refuses ${c.kind}: ${c.name} at ${c.path}`, () => {
      const result = parseResource(invalidObject(c))
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.problems.map((p) => p.path)).toContain(c.path)
    })
  }

  it('names the apiVersion and kind it does not know', () => {
    expect(parseResource({ apiVersion: 'v1', kind: 'Pod' })).toEqual({
      ok: false,
      problems: [{ path: 'apiVersion', message: 'expected "gatehouse.dev/v1alpha1", got "v1"' }],
    })
    const unknownKind = parseResource({ apiVersion: 'gatehouse.dev/v1alpha1', kind: 'Route', metadata: { name: 'x' } })
    expect(unknownKind.ok ? [] : unknownKind.problems[0]!.path).toBe('kind')
  })

  it('returns typed defaults', () => {
    const result = parseResource(baseline.Guardrail!())
    expect(result.ok && result.resource.kind === 'Guardrail' && result.resource.spec.checks[0]!.enabled).toBe(true)
  })
})
