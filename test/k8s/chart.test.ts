/**
 * The Helm chart: lint and template are clean for the default values and for the full-featured
 * values file, the CRDs it ships equal the generated ones, and every rendered manifest passes a
 * server-side dry run on a real kube-apiserver (admission, schema and CEL included).
 */
import { readFile, readdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { requireTools, type ApiServerConnection } from './apiserver.ts'
import { installCrds, kubectl, repoRoot, runTool } from './kube.ts'
import { sharedApiServer } from './shared.ts'

const tools = requireTools(['etcd', 'kube-apiserver', 'kubectl', 'helm'])
const CHART = path.join(repoRoot, 'charts/gatehouse')
const FULL_VALUES = path.join(CHART, 'ci/full-values.yaml')
const NAMESPACE = 'gatehouse-chart'

/** Value sets every check runs with. */
const VALUE_SETS: Array<{ name: string; args: string[] }> = [
  { name: 'default values', args: [] },
  { name: 'full-featured values', args: ['-f', FULL_VALUES] },
]

/**
 * The API server has no Prometheus Operator or Gateway API: these minimal CRDs (no schema) let the
 * dry run cover ServiceMonitor, PodMonitor, PrometheusRule and HTTPRoute objects as far as a cluster without them can.
 */
const FOREIGN_CRDS = [
  { group: 'monitoring.coreos.com', kind: 'ServiceMonitor', plural: 'servicemonitors', version: 'v1' },
  { group: 'monitoring.coreos.com', kind: 'PodMonitor', plural: 'podmonitors', version: 'v1' },
  { group: 'monitoring.coreos.com', kind: 'PrometheusRule', plural: 'prometheusrules', version: 'v1' },
  { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', plural: 'httproutes', version: 'v1' },
]

function foreignCrdYaml(): string {
  return FOREIGN_CRDS.map(
    (c) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${c.plural}.${c.group}
  # *.k8s.io groups are protected; the real Gateway API CRDs carry this approval too.
  annotations: { api-approved.kubernetes.io: "https://github.com/kubernetes-sigs/gateway-api/pull/1538" }
spec:
  group: ${c.group}
  names: { kind: ${c.kind}, plural: ${c.plural}, singular: ${c.kind.toLowerCase()}, listKind: ${c.kind}List }
  scope: Namespaced
  versions:
    - name: ${c.version}
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`,
  ).join('---\n')
}

function helm(args: string[]) {
  return runTool('helm', args)
}

describe.skipIf(!tools.available)(`Helm chart${tools.available ? '' : ` (skipped: ${tools.reason})`}`, () => {
  let server: ApiServerConnection
  let workDir: string

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-chart-'))
    // The shared server has crds/generated installed: what `helm install` applies first, as the
    // chart's crds/ folder equals it (checked below).
    server = sharedApiServer()
    const foreign = path.join(workDir, 'foreign-crds')
    await writeFile(`${foreign}.yaml`, foreignCrdYaml())
    await installCrds(server, `${foreign}.yaml`)
    const ns = await kubectl(server, ['create', 'namespace', NAMESPACE])
    expect(ns.code, ns.stderr).toBe(0)
  })

  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true })
  })

  for (const values of VALUE_SETS) {
    it(`lints cleanly with ${values.name}`, async () => {
      const res = await helm(['lint', '--strict', CHART, ...values.args])
      expect(res.code, res.stdout + res.stderr).toBe(0)
      expect(res.stdout).not.toMatch(/\[(WARNING|ERROR)\]/)
    })

    it(`renders and passes a server-side dry run with ${values.name}`, async () => {
      const rendered = await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, ...values.args])
      expect(rendered.code, rendered.stderr).toBe(0)
      const docs = parseAllDocuments(rendered.stdout)
        .map((d) => d.toJS() as { kind?: string } | null)
        .filter((d) => d !== null)
      expect(docs.length).toBeGreaterThan(10)
      const file = path.join(workDir, `${values.name.replace(/\W+/g, '-')}.yaml`)
      await writeFile(file, rendered.stdout)
      const applied = await kubectl(server, [
        'apply',
        '--server-side',
        '--dry-run=server',
        '--field-manager=helm-dry-run',
        '--namespace',
        NAMESPACE,
        '-f',
        file,
      ])
      expect(applied.code, applied.stderr).toBe(0)
      // One line per object: every rendered object was sent.
      expect(applied.stdout.trim().split('\n')).toHaveLength(docs.length)
    })
  }

  it('renders the security and shutdown settings on every Gatehouse container', async () => {
    const rendered = await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, '-f', FULL_VALUES])
    const deployments = parseAllDocuments(rendered.stdout)
      .map((d) => d.toJS() as Workload | null)
      .filter((d): d is Workload => d?.kind === 'Deployment')
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['gh-gatehouse-gateway', 'gh-gatehouse-operator'])
    for (const d of deployments) {
      const pod = d.spec.template.spec
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } })
      const [container] = pod.containers
      expect(container!.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      })
      expect(container!.livenessProbe.httpGet.path).toBe('/livez')
      expect(container!.readinessProbe.httpGet.path).toBe('/readyz')
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(0)
    }
    const operator = deployments.find((d) => d.metadata.name.endsWith('-operator'))!
    expect(operator.spec.template.spec.containers[0]!.lifecycle!.preStop.exec.command[0]).toBe('sleep')
    const gateway = deployments.find((d) => d.metadata.name.endsWith('-gateway'))!
    const container = gateway.spec.template.spec.containers[0]!
    const env = container.env.map((e) => e.name)
    expect(env).toEqual(
      expect.arrayContaining(['GATEHOUSE_CONTROL_PLANE_URL', 'GATEHOUSE_REDIS_URL', 'GATEHOUSE_KEY_PEPPER', 'GATEHOUSE_ENCRYPTION_KEY']),
    )
    // The gateway drains itself: readiness fails for the window, then the rest of the grace period
    // is for requests in flight (a preStop sleep would only delay the SIGTERM that starts it).
    const value = (name: string): string | undefined => container.env.find((e) => e.name === name)?.value
    const delayMs = Number(value('GATEHOUSE_SHUTDOWN_DELAY_MS'))
    const drainMs = Number(value('GATEHOUSE_SHUTDOWN_TIMEOUT_MS'))
    expect(delayMs).toBeGreaterThan(0)
    expect(delayMs + drainMs).toBeLessThan(gateway.spec.template.spec.terminationGracePeriodSeconds * 1000)
    expect(container.lifecycle).toBeUndefined()
    expect(value('GATEHOUSE_METRICS_PORT')).toBe('9464')
    expect(value('GATEHOUSE_FORWARD_ADMIN')).toBe('false')
  })

  it('renders the gateways\' Redis ACL user: an ACL file for the bundled Redis, ACL SETUSER for an existing one', async () => {
    type Container = { name: string; args?: string[]; env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }> }
    type Pod = { kind: string; metadata: { name: string }; spec: { template: { spec: { initContainers?: Container[]; containers: Container[] } } } }
    const render = async (args: string[]) => {
      const rendered = await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, ...args])
      expect(rendered.code, rendered.stderr).toBe(0)
      return parseAllDocuments(rendered.stdout).map((d) => d.toJS() as Pod | null).filter((d): d is Pod => d !== null)
    }
    const named = (docs: Pod[], suffix: string) => docs.find((d) => d.kind === 'Deployment' && d.metadata.name.endsWith(suffix))!.spec.template.spec
    const env = (container: Container, name: string) => container.env?.find((e) => e.name === name)

    // Bundled: no Secret rendered (passwords are generated at run time); the Redis pod writes its
    // ACL file first and starts with it; the operator's init-secrets generates the Secret.
    const bundled = await render([])
    expect(bundled.filter((d) => d.kind === 'Secret' && d.metadata.name.endsWith('-redis'))).toEqual([])
    const redis = named(bundled, '-redis')
    expect(redis.initContainers!.map((c) => [c.name, c.args])).toEqual([['redis-acl', ['redis-acl', 'file', '/etc/redis-acl/users.acl']]])
    expect(env(redis.initContainers![0]!, 'GATEHOUSE_REDIS_ADMIN_URL')!.valueFrom!.secretKeyRef).toEqual({ name: 'gh-gatehouse-redis', key: 'admin-url' })
    expect(redis.containers[0]!.args).toEqual(expect.arrayContaining(['--aclfile', '/etc/redis-acl/users.acl']))
    const initSecrets = named(bundled, '-operator').initContainers!.find((c) => c.name === 'init-secrets')!
    expect(initSecrets.args).toEqual(expect.arrayContaining(['--redis-secret=gh-gatehouse-redis', '--redis-user=gatehouse-gateway']))
    // Gateways and the ACL rule read the same prefixes.
    const gateway = named(bundled, '-gateway').containers[0]!
    expect(env(gateway, 'GATEHOUSE_LIMITS_KEY_PREFIX')!.value).toBe('gh:')
    expect(env(gateway, 'GATEHOUSE_REDIS_KEY_PREFIX')!.value).toBe('gh')
    expect(env(redis.initContainers![0]!, 'GATEHOUSE_LIMITS_KEY_PREFIX')!.value).toBe('gh:')

    // An existing Redis with an admin Secret: the operator sets the user at every start.
    const existing = await render(['-f', FULL_VALUES])
    expect(existing.filter((d) => d.metadata.name.endsWith('-redis'))).toEqual([])
    const apply = named(existing, '-operator').initContainers!.find((c) => c.name === 'redis-acl')!
    expect(apply.args).toEqual(['redis-acl', 'apply'])
    expect(env(apply, 'GATEHOUSE_REDIS_ADMIN_URL')!.valueFrom!.secretKeyRef).toEqual({ name: 'gatehouse-redis-admin', key: 'url' })
    expect(env(apply, 'GATEHOUSE_REDIS_URL')!.valueFrom!.secretKeyRef).toEqual({ name: 'gatehouse-redis', key: 'url' })
    expect(env(apply, 'GATEHOUSE_LIMITS_KEY_PREFIX')!.value).toBe('gh-prod:')
    // The admin URL reaches no gateway.
    expect(JSON.stringify(named(existing, '-gateway'))).not.toContain('gatehouse-redis-admin')
  })

  it('renders the same output twice with default values: no random value in any template', async () => {
    const first = await helm(['template', 'gh', CHART, '--namespace', NAMESPACE])
    const second = await helm(['template', 'gh', CHART, '--namespace', NAMESPACE])
    expect(first.code, first.stderr).toBe(0)
    expect(second.stdout).toBe(first.stdout)
    const full = [await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, '-f', FULL_VALUES]), await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, '-f', FULL_VALUES])]
    expect(full[1]!.stdout).toBe(full[0]!.stdout)
    // The generated Secrets (the bundled Redis's included) come from the operator's init container at run time, never from Helm.
    const docs = parseAllDocuments(first.stdout).map((d) => d.toJS() as Manifest | null).filter((d): d is Manifest => d !== null)
    expect(docs.filter((d) => d.kind === 'Secret').map((d) => d.metadata.name)).toEqual([])
    const operator = docs.find((d) => d.kind === 'Deployment' && d.metadata.name.endsWith('-operator'))!
    expect(operator.spec!.template!.spec.initContainers![0]!.args).toEqual(expect.arrayContaining(['init-secrets', '--secret=gh-gatehouse-secrets', '--admin-key-key=admin-api-key']))
    const postgres = docs.find((d) => d.kind === 'StatefulSet' && d.metadata.name.endsWith('-postgresql'))!
    expect(postgres.spec!.volumeClaimTemplates).toHaveLength(1)
  })

  it.each(VALUE_SETS)('grants no cluster-wide Secret access ($name)', async ({ args }) => {
    const rendered = await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, '--set', 'rbac.secretNamespaces={team-a}', ...args])
    const docs = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as Manifest | null).filter((d): d is Manifest => d !== null)
    const touchesSecrets = (rule: RbacRule): boolean =>
      (rule.apiGroups ?? []).some((group) => group === '' || group === '*') && (rule.resources ?? []).some((resource) => resource === 'secrets' || resource === '*')
    const clusterRoles = docs.filter((d) => d.kind === 'ClusterRole')
    expect(clusterRoles.length).toBeGreaterThan(0)
    for (const role of clusterRoles) expect((role.rules ?? []).filter(touchesSecrets)).toEqual([])
    // Secrets are readable only through Roles in the release namespace and the listed one.
    const secretRoles = docs.filter((d) => d.kind === 'Role' && (d.rules ?? []).some(touchesSecrets))
    expect(new Set(secretRoles.map((role) => role.metadata.namespace ?? NAMESPACE))).toEqual(new Set([NAMESPACE, 'team-a']))
    for (const binding of docs.filter((d) => d.kind === 'ClusterRoleBinding')) expect(binding.roleRef!.kind).toBe('ClusterRole')
    // Metrics are scraped on their own port; the Ingress sends only to the data-plane port.
    for (const monitor of docs.filter((d) => d.kind === 'ServiceMonitor')) expect(monitor.spec!.endpoints!.map((e) => e.port)).toEqual(['metrics'])
  })

  it('renders sidecar mode: webhook Service, configuration with system namespaces excluded, RBAC, cert-manager or self-managed certificates, no central gateway when asked', async () => {
    const docsOf = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string; annotations?: Record<string, string> }; [k: string]: unknown } | null).filter((d) => d !== null)
    const self = docsOf((await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, '-f', FULL_VALUES])).stdout)
    const config = self.find((d) => d.kind === 'MutatingWebhookConfiguration') as unknown as { webhooks: Array<{ failurePolicy: string; sideEffects: string; namespaceSelector: { matchExpressions: Array<{ values: string[] }> }; clientConfig: { caBundle?: string } }> }
    expect(config.webhooks).toHaveLength(2)
    for (const webhook of config.webhooks) {
      expect(webhook).toMatchObject({ failurePolicy: 'Fail', sideEffects: 'None' })
      expect(webhook.namespaceSelector.matchExpressions[0]!.values).toEqual(['kube-system', 'kube-public', 'kube-node-lease', NAMESPACE, 'monitoring'])
      // The operator writes caBundle itself; the chart leaves it out so upgrades do not clear it.
      expect(webhook.clientConfig.caBundle).toBeUndefined()
    }
    expect(self.find((d) => d.kind === 'Service' && d.metadata.name === 'gh-gatehouse-webhook')).toBeDefined()
    const operatorRole = self.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'gh-gatehouse-operator') as unknown as { rules: Array<{ resources: string[]; verbs: string[] }> }
    expect(operatorRole.rules).toContainEqual(expect.objectContaining({ resources: ['tokenreviews'], verbs: ['create'] }))
    const operator = self.find((d) => d.kind === 'Deployment' && d.metadata.name === 'gh-gatehouse-operator') as unknown as Workload
    const env = operator.spec.template.spec.containers[0]!.env.map((e) => e.name)
    expect(env).toEqual(expect.arrayContaining(['GATEHOUSE_WEBHOOK_PORT', 'GATEHOUSE_WEBHOOK_SECRET', 'GATEHOUSE_WEBHOOK_CONFIGURATION', 'GATEHOUSE_SIDECAR_IMAGE', 'GATEHOUSE_SIDECAR_CONTROL_PLANE_URL']))
    const values = Object.fromEntries(operator.spec.template.spec.containers[0]!.env.map((e) => [e.name, (e as { value?: string }).value]))
    // Sidecars reach the control plane through the webhook Service's TLS, and get the release's tracing and access-log settings.
    expect(values.GATEHOUSE_SIDECAR_CONTROL_PLANE_URL).toBe(`https://gh-gatehouse-webhook.${NAMESPACE}.svc:443`)
    expect(values).toMatchObject({ GATEHOUSE_SIDECAR_OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc:4318', GATEHOUSE_SIDECAR_GATEHOUSE_ACCESS_LOG: 'true', GATEHOUSE_SIDECAR_GATEHOUSE_ACCESS_LOG_SAMPLE_RATE: '1' })
    expect(env.filter((name) => name.startsWith('GATEHOUSE_SIDECAR_OTEL_EXPORTER_OTLP_HEADERS'))).toEqual([])

    const managed = docsOf((await helm(['template', 'gh', CHART, '--namespace', NAMESPACE, '--set', 'sidecarInjector.enabled=true', '--set', 'sidecarInjector.certificates.mode=cert-manager', '--set', 'gateway.enabled=false'])).stdout)
    expect(managed.find((d) => d.kind === 'MutatingWebhookConfiguration')!.metadata.annotations!['cert-manager.io/inject-ca-from']).toBe(`${NAMESPACE}/gh-gatehouse-webhook`)
    expect(managed.filter((d) => d.kind === 'Certificate' || d.kind === 'Issuer').map((d) => d.kind).sort()).toEqual(['Certificate', 'Issuer'])
    expect(managed.filter((d) => d.kind === 'Deployment').map((d) => d.metadata.name)).not.toContain('gh-gatehouse-gateway')
    expect(managed.some((d) => d.kind === 'HorizontalPodAutoscaler')).toBe(false)
  })

  it('ships CRDs identical to crds/generated, and templates them with keep only when asked', async () => {
    const generated = (await readdir(path.join(repoRoot, 'crds/generated'))).sort()
    for (const file of generated) {
      expect(await readFile(path.join(CHART, 'crds', file), 'utf8')).toBe(
        await readFile(path.join(repoRoot, 'crds/generated', file), 'utf8'),
      )
    }
    const withCrds = await helm(['template', 'gh', CHART, '--set', 'crds.install=true'])
    const crds = parseAllDocuments(withCrds.stdout)
      .map((d) => d.toJS() as { kind?: string; metadata?: { annotations?: Record<string, string> } } | null)
      .filter((d) => d?.kind === 'CustomResourceDefinition')
    expect(crds).toHaveLength(generated.length)
    for (const crd of crds) expect(crd!.metadata!.annotations!['helm.sh/resource-policy']).toBe('keep')
    const without = await helm(['template', 'gh', CHART])
    expect(without.stdout).not.toContain('kind: CustomResourceDefinition')
  })
})

interface RbacRule {
  apiGroups?: string[]
  resources?: string[]
  verbs?: string[]
}

interface Manifest {
  kind: string
  metadata: { name: string; namespace?: string }
  rules?: RbacRule[]
  roleRef?: { kind: string; name: string }
  spec?: {
    endpoints?: Array<{ port: string }>
    volumeClaimTemplates?: unknown[]
    template?: { spec: { initContainers?: Array<{ args: string[] }> } }
  }
}

interface Workload {
  kind: string
  metadata: { name: string }
  spec: {
    template: {
      spec: {
        securityContext: Record<string, unknown>
        terminationGracePeriodSeconds: number
        containers: Array<{
          securityContext: Record<string, unknown>
          livenessProbe: { httpGet: { path: string } }
          readinessProbe: { httpGet: { path: string } }
          lifecycle?: { preStop: { exec: { command: string[] } } }
          env: Array<{ name: string; value?: string }>
        }>
      }
    }
  }
}
