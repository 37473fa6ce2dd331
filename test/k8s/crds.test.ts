/**
 * The generated CRDs on a real kube-apiserver: they install and become Established, the examples
 * are accepted, every bound and CEL rule rejects its invalid case with the expected message, and
 * every field of every kind carries a description in the published OpenAPI and `kubectl explain`.
 */
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { crdManifests, GROUP, VERSION, type KindDefinition, kindDefinitions } from '../../crds/src/index.ts'
import { baseline, invalidCases, invalidObject } from '../../crds/src/testdata/cases.ts'
import { requireTools, type ApiServerConnection } from './apiserver.ts'
import { apiErrorMessage, kubectl, readYamlDir, repoRoot } from './kube.ts'
import { sharedApiServer } from './shared.ts'

const tools = requireTools(['etcd', 'kube-apiserver', 'kubectl'])
const NAMESPACE = 'gatehouse-crds'
const pluralOf = new Map(kindDefinitions.map((d: KindDefinition) => [d.kind, d.plural]))

describe.skipIf(!tools.available)(`CRDs on kube-apiserver${tools.available ? '' : ` (skipped: ${tools.reason})`}`, () => {
  let server: ApiServerConnection
  let custom: CustomObjectsApi

  beforeAll(async () => {
    // The shared server's global setup installed what is committed (the stale test proves it
    // equals the schema source) and waited until every CRD was Established.
    server = sharedApiServer()
    await server.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } })
    custom = server.kubeConfig.makeApiClient(CustomObjectsApi)
  })

  const create = (obj: Record<string, unknown>, dryRun?: 'All') =>
    custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: pluralOf.get(obj.kind as string)!,
      body: obj,
      fieldValidation: 'Strict',
      ...(dryRun ? { dryRun } : {}),
    })

  it('accepts every example in examples/k8s', async () => {
    const docs = await readYamlDir(path.join(repoRoot, 'examples/k8s'))
    const core = server.kubeConfig.makeApiClient(CoreV1Api)
    const kinds = new Set<string>()
    for (const { file, obj } of docs) {
      if (obj.apiVersion === 'v1' && obj.kind === 'Secret') {
        await core.createNamespacedSecret({ namespace: NAMESPACE, body: obj })
        continue
      }
      kinds.add(obj.kind as string)
      await create(obj).catch((error) => {
        throw new Error(`${file} ${String(obj.kind)}: ${apiErrorMessage(error)}`)
      })
    }
    expect([...kinds].sort()).toEqual([...pluralOf.keys()].sort())
  })

  it('accepts every baseline object', async () => {
    for (const make of Object.values(baseline)) await create(make(), 'All')
  })

  for (const c of invalidCases) {
    it(`rejects ${c.kind}: ${c.name}`, async () => {
      const message = await create(invalidObject(c), 'All').then(
        () => 'accepted',
        (error: unknown) => apiErrorMessage(error),
      )
      expect(message).toContain(c.apiMessage)
      // The message names the offending field (for unknown fields, its full path).
      expect(message).toContain(c.path.split('[')[0])
    })
  }

  it('refuses to change a Provider kind (transition rule)', async () => {
    const provider = { ...baseline.Provider!(), metadata: { name: 'immutable-kind' } }
    await create(provider)
    const message = await custom
      .patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace: NAMESPACE,
          plural: 'providers',
          name: 'immutable-kind',
          body: [{ op: 'replace', path: '/spec/kind', value: 'groq' }],
        },
      )
      .then(
        () => 'accepted',
        (error: unknown) => apiErrorMessage(error),
      )
    expect(message).toContain('kind is immutable')
  })

  it('publishes a description for every field of every kind (OpenAPI v3)', async () => {
    const res = await kubectl(server, ['get', '--raw', `/openapi/v3/apis/${GROUP}/${VERSION}`])
    expect(res.stderr).toBe('')
    const doc = JSON.parse(res.stdout) as { components: { schemas: Record<string, Schema> } }
    const missing: string[] = []
    let fields = 0
    for (const def of kindDefinitions) {
      const schema = doc.components.schemas[`dev.gatehouse.${VERSION}.${def.kind}`]
      expect(schema, def.kind).toBeDefined()
      for (const [at, node] of walkSchema(schema!, def.kind, doc.components.schemas)) {
        fields++
        if (!node.description) missing.push(at)
      }
    }
    expect(missing).toEqual([])
    expect(fields).toBeGreaterThan(200)
  })

  it('explains every kind and its spec fields with kubectl explain', async () => {
    for (const crd of crdManifests()) {
      const plural = (crd.spec.names as { plural: string }).plural
      const res = await kubectl(server, ['explain', `${plural}.spec`, `--api-version=${GROUP}/${VERSION}`])
      expect(res.code, res.stderr).toBe(0)
      const spec = (crd.spec.versions as Array<{ schema: { openAPIV3Schema: Schema } }>)[0]!.schema.openAPIV3Schema.properties!.spec!
      for (const [name, field] of Object.entries(spec.properties ?? {})) {
        expect(res.stdout, `${plural}.spec.${name}`).toContain(name)
        // kubectl wraps long text; the first words of each description must be there.
        const firstWords = field.description!.split(/\s+/).slice(0, 3).join(' ')
        expect(res.stdout.replace(/\s+/g, ' '), `${plural}.spec.${name}`).toContain(firstWords)
      }
    }
  })

  it('shows the printer columns', async () => {
    const res = await kubectl(server, ['get', `providers.${GROUP}`, '-n', NAMESPACE, '-o', 'wide'])
    expect(res.code, res.stderr).toBe(0)
    const header = res.stdout.split('\n')[0]!
    for (const column of ['NAME', 'KIND', 'WORKSPACE', 'BASE URL', 'READY', 'REASON', 'AGE']) expect(header).toContain(column)
  })
})

interface Schema {
  description?: string
  properties?: Record<string, Schema>
  items?: Schema
  additionalProperties?: Schema | boolean
  allOf?: Schema[]
  $ref?: string
}

/** Walks the published schema (which may $ref shared definitions such as ObjectMeta). */
function* walkSchema(node: Schema, at: string, defs: Record<string, Schema>): Generator<[string, Schema]> {
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = `${at}.${name}`
    yield [path, child]
    // metadata is the standard ObjectMeta, documented by Kubernetes itself.
    if (name === 'metadata' && at.indexOf('.') === -1) continue
    const resolved = resolve(child, defs)
    yield* walkSchema(resolved, path, defs)
    if (resolved.items) yield* walkSchema(resolve(resolved.items, defs), `${path}[]`, defs)
  }
}

function resolve(node: Schema, defs: Record<string, Schema>): Schema {
  const ref = node.$ref ?? node.allOf?.[0]?.$ref
  if (!ref) return node
  return defs[ref.replace('#/components/schemas/', '')] ?? node
}
