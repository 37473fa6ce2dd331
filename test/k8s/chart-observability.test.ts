/**
 * The chart's monitoring objects, checked with the tools Prometheus users run:
 *
 *  - the PrometheusRule's rules pass `promtool check rules`, every alert carries a severity, a
 *    summary, a description and a runbook URL, and `promtool test rules` shows the main alerts
 *    fire on the series they are about (and stay quiet otherwise);
 *  - the Grafana dashboard's JSON parses and every panel's PromQL names only metrics a gateway
 *    exports (read from a real gateway's /metrics; runs without the tools); the ConfigMap carries
 *    the sidecar's label and the same JSON, whose expressions pass promtool's parser;
 *  - the gateway's own exposition passes `promtool check metrics` (naming conventions);
 *  - ServiceMonitor and PodMonitor select the gateway's and the operator's metrics ports (their own
 *    port, named `metrics`, never the data-plane or admin API port).
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments, stringify } from 'yaml'
import { limiterFromEnv, limitsStage, UsageShipper } from '@gatehouse/gateway'
import { requireTools, toolPath } from './apiserver.ts'
import { repoRoot, runTool } from './kube.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { parsePrometheusText } from '../helpers/prometheus-text.ts'

const tools = requireTools(['helm', 'promtool'])
const CHART = path.join(repoRoot, 'charts/gatehouse')
const MONITORING = ['--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.podMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true', '--set', 'metrics.grafanaDashboard.enabled=true']

interface Manifest {
  kind: string
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  spec?: Record<string, unknown>
  data?: Record<string, string>
}
interface AlertRule {
  alert?: string
  record?: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}
interface Panel {
  type: string
  title: string
  targets?: Array<{ expr: string }>
}

function promtool(args: string[], input?: string): { code: number; output: string } {
  const result = spawnSync(toolPath('promtool'), args, { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return { code: result.status ?? 1, output: `${result.stdout}${result.stderr}` }
}

/** Metric names a PromQL expression reads: identifiers followed by a selector or a range, not functions, keywords or label names. */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  const withoutGrouping = withoutStrings.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
  return [...withoutGrouping.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{|\[)/g)].map((match) => match[1]!)
}

/** Grafana's variables, replaced the way a dashboard would before the expression reaches Prometheus. */
function substituteVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$namespace', 'gatehouse').replaceAll('$workspace', '.*')
}

let gateway: TestGateway
let exposition: string

beforeAll(async () => {
  // A gateway with every feature's metrics (limits, usage delivery, process), as production runs it.
  const limits = limiterFromEnv({})
  const limitsFactory = limitsStage({ limiter: limits.limiter, keyPrefix: limits.keyPrefix })
  const shipper = new UsageShipper({ transport: async () => {} })
  gateway = await startTestGateway([], { features: { limits: limitsFactory }, metricsRegistries: [limitsFactory.registry], usage: shipper, processMetrics: true })
  const close = gateway.close
  gateway.close = async () => {
    await close()
    await shipper.close()
    await limits.limiter.close()
  }
  exposition = await (await fetch(`${gateway.url}/metrics`)).text()
}, 60_000)

afterAll(async () => {
  await gateway?.close()
})

interface Dashboard {
  uid: string
  title: string
  panels: Panel[]
  templating: { list: Array<{ name: string }> }
}

function dashboardQueries(dashboard: Dashboard): Array<{ panel: string; expr: string }> {
  return dashboard.panels.filter((panel) => panel.type !== 'row').flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })))
}

describe('the Grafana dashboard file', () => {
  it('parses and reads only metrics a gateway exports', async () => {
    const dashboard = JSON.parse(await readFile(path.join(CHART, 'dashboards/gatehouse-gateway.json'), 'utf8')) as Dashboard
    expect(dashboard.uid).toBe('gatehouse-gateway')
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(['datasource', 'namespace', 'workspace'])
    const queries = dashboardQueries(dashboard)
    expect(queries.length).toBeGreaterThan(20)
    const exported = exportedNames(exposition)
    const read = new Set<string>()
    for (const query of queries) {
      const names = metricNames(query.expr)
      expect(names.length, `${query.panel}: ${query.expr}`).toBeGreaterThan(0)
      for (const name of names) {
        expect(exported, `${query.panel}: ${name}`).toContain(name)
        read.add(name)
      }
    }
    // The GenAI conventions' metrics are on the dashboard.
    expect([...read]).toEqual(expect.arrayContaining(['gen_ai_server_time_to_first_token_seconds_bucket', 'gen_ai_client_token_usage_bucket']))
  })
})

describe.skipIf(!tools.available)(`chart monitoring${tools.available ? '' : ` (skipped: ${tools.reason})`}`, () => {
  let workDir: string
  let manifests: Manifest[]

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-monitoring-'))
    const rendered = await runTool('helm', ['template', 'gh', CHART, '--namespace', 'gatehouse', ...MONITORING])
    expect(rendered.code, rendered.stderr).toBe(0)
    manifests = parseAllDocuments(rendered.stdout)
      .map((doc) => doc.toJS() as Manifest | null)
      .filter((doc): doc is Manifest => doc !== null)
  }, 60_000)

  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true })
  })

  const byKind = (kind: string): Manifest[] => manifests.filter((manifest) => manifest.kind === kind)

  it('passes promtool check rules, and every alert says what it means and what to do', async () => {
    const [rule] = byKind('PrometheusRule')
    expect(rule).toBeDefined()
    const groups = (rule!.spec as { groups: Array<{ name: string; rules: AlertRule[] }> }).groups
    const file = path.join(workDir, 'rules.yaml')
    await writeFile(file, stringify({ groups }))
    const checked = promtool(['check', 'rules', file])
    expect(checked.code, checked.output).toBe(0)
    const alerts = groups.flatMap((group) => group.rules)
    expect(alerts.map((alert) => alert.alert)).toEqual(
      expect.arrayContaining(['GatehouseHighErrorRatio', 'GatehouseUpstreamAttemptFailures', 'GatehouseUpstreamRetryBudgetSaturated', 'GatehouseSnapshotSyncLag', 'GatehouseUsageSpoolGrowing', 'GatehouseBudgetExhausted']),
    )
    for (const alert of alerts) {
      expect(alert.labels?.severity, alert.alert).toMatch(/^(critical|warning|info)$/)
      expect(alert.annotations?.summary, alert.alert).toBeTruthy()
      expect(alert.annotations?.description, alert.alert).toBeTruthy()
      expect(alert.annotations?.runbook_url, alert.alert).toMatch(new RegExp(`^https://.+#${alert.alert!.toLowerCase()}$`))
      // Scoped to the release's namespace, and reading only metrics the gateway exports.
      expect(alert.expr, alert.alert).toContain('namespace="gatehouse"')
      const exported = exportedNames(exposition)
      for (const name of metricNames(alert.expr)) expect(exported, `${alert.alert}: ${name}`).toContain(name)
    }
  })

  it('fires the error-ratio, budget, spool and unpriced-model alerts on the series they watch (promtool test rules)', async () => {
    const [rule] = byKind('PrometheusRule')
    const groups = (rule!.spec as { groups: unknown[] }).groups
    await writeFile(path.join(workDir, 'alerts.yaml'), stringify({ groups }))
    const tests = {
      rule_files: ['alerts.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // 10% of chat requests answered 5xx for 20 minutes.
            { series: 'gatehouse_requests_total{namespace="gatehouse",pod="gw-1",operation="chat",workspace="team-a",provider="openai",model="gpt-4o",status_class="2xx"}', values: '0+90x20' },
            { series: 'gatehouse_requests_total{namespace="gatehouse",pod="gw-1",operation="chat",workspace="team-a",provider="openai",model="gpt-4o",status_class="5xx"}', values: '0+10x20' },
            { series: 'gatehouse_limit_refusals_total{namespace="gatehouse",pod="gw-1",workspace="team-a",reason="budget_exhausted"}', values: '0 0 0 0 0 3 3 3 3 3 3' },
            // The spool grows by 1 MB a minute for an hour.
            { series: 'gatehouse_usage_spool_bytes{namespace="gatehouse",pod="gw-1"}', values: '0+1000000x70' },
            // Answers of a model without a price from the 10th minute on.
            { series: 'gatehouse_unpriced_requests_total{namespace="gatehouse",pod="gw-1",workspace="team-a",provider="acme",model="other"}', values: '0 0 0 0 0 0 0 0 0 0 2 4 6' },
            // Elsewhere: a healthy namespace must not alert.
            { series: 'gatehouse_requests_total{namespace="other",pod="gw-9",operation="chat",workspace="x",provider="openai",model="gpt-4o",status_class="5xx"}', values: '0+100x20' },
          ],
          alert_rule_test: [
            {
              eval_time: '15m',
              alertname: 'GatehouseHighErrorRatio',
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', namespace: 'gatehouse' },
                  exp_annotations: {
                    summary: 'More than 5% of AI requests through Gatehouse fail with a 5xx.',
                    description: '10% of data-plane requests in gatehouse answered 5xx over the last 5 minutes. Break it down by provider and error code with gatehouse_request_errors_total.',
                    runbook_url: 'https://github.com/gatehouse-dev/gatehouse/blob/main/docs/observability.md#gatehousehigherrorratio',
                  },
                },
              ],
            },
            { eval_time: '5m', alertname: 'GatehouseHighErrorRatio', exp_alerts: [] },
            {
              eval_time: '8m',
              alertname: 'GatehouseBudgetExhausted',
              exp_alerts: [{ exp_labels: { severity: 'info', namespace: 'gatehouse', workspace: 'team-a' }, exp_annotations: { summary: "A workspace's budget is exhausted; its requests are refused.", description: 'Workspace team-a had requests refused with 412 budget_exhausted in the last 15 minutes: raise the budget, or wait for its period to reset.', runbook_url: 'https://github.com/gatehouse-dev/gatehouse/blob/main/docs/observability.md#gatehousebudgetexhausted' } }],
            },
            { eval_time: '3m', alertname: 'GatehouseBudgetExhausted', exp_alerts: [] },
            {
              eval_time: '65m',
              alertname: 'GatehouseUsageSpoolGrowing',
              exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'gatehouse', pod: 'gw-1' }, exp_annotations: { summary: 'Usage records pile up on a gateway instead of reaching the control plane.', description: 'The usage spool of gw-1 has grown for 30 minutes: the control plane is not taking usage records (logs, analytics and budgets lag).', runbook_url: 'https://github.com/gatehouse-dev/gatehouse/blob/main/docs/observability.md#gatehouseusagespoolgrowing' } }],
            },
            { eval_time: '20m', alertname: 'GatehouseUsageSpoolGrowing', exp_alerts: [] },
            {
              eval_time: '12m',
              alertname: 'GatehouseUnpricedModel',
              exp_alerts: [{
                exp_labels: { severity: 'info', namespace: 'gatehouse', workspace: 'team-a', provider: 'acme', model: 'other' },
                exp_annotations: {
                  summary: 'Requests used a model without a price; their cost is unknown and budgets do not count them.',
                  description: 'Workspace team-a had answers from model other at provider acme in the last hour that no price covers: their usage records carry no cost and budgets in USD do not count them. Give the model a price (PUT /v1/model-pricing/{provider}/{model}).',
                  runbook_url: 'https://github.com/gatehouse-dev/gatehouse/blob/main/docs/observability.md#gatehouseunpricedmodel',
                },
              }],
            },
            { eval_time: '9m', alertname: 'GatehouseUnpricedModel', exp_alerts: [] },
          ],
        },
      ],
    }
    const file = path.join(workDir, 'alerts.test.yaml')
    await writeFile(file, stringify(tests))
    const tested = promtool(['test', 'rules', file])
    expect(tested.code, tested.output).toBe(0)
  })

  it('ships the dashboard for the Grafana sidecar, its PromQL valid for promtool', async () => {
    const configMap = byKind('ConfigMap').find((manifest) => manifest.metadata.labels?.grafana_dashboard === '1')
    expect(configMap, 'a ConfigMap labelled grafana_dashboard: "1"').toBeDefined()
    const [fileName, json] = Object.entries(configMap!.data ?? {})[0]!
    expect(fileName).toMatch(/\.json$/)
    // The file the checks above read, unchanged.
    expect(JSON.parse(json)).toEqual(JSON.parse(await readFile(path.join(CHART, 'dashboards/gatehouse-gateway.json'), 'utf8')))
    const queries = dashboardQueries(JSON.parse(json) as Dashboard)
    // promtool parses every expression (as recording rules of a generated rule file).
    const rules = queries.map((query, index) => ({ record: `gatehouse:dashboard_query_${index}`, expr: substituteVariables(query.expr) }))
    const file = path.join(workDir, 'dashboard-queries.yaml')
    await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules }] }))
    const checked = promtool(['check', 'rules', file])
    expect(checked.code, checked.output).toBe(0)
  })

  it("passes promtool check metrics on the gateway's exposition (but prom-client's own process gauges)", () => {
    const checked = promtool(['check', 'metrics'], exposition)
    // prom-client's default metrics name three gauges `nodejs_active_*_total`; promtool flags them. Everything of ours is clean.
    const findings = checked.output.split('\n').filter((line) => line.trim() !== '' && !/^gatehouse_nodejs_active_(handles|requests|resources)_total non-counter/.test(line))
    expect(findings).toEqual([])
  })

  it('scrapes the gateway and operator metrics ports with a ServiceMonitor or a PodMonitor', () => {
    const [serviceMonitor] = byKind('ServiceMonitor')
    const [podMonitor] = byKind('PodMonitor')
    interface Selector { matchLabels: Record<string, string>; matchExpressions: Array<{ key: string; operator: string; values: string[] }> }
    const service = serviceMonitor!.spec as { selector: Selector; endpoints: Array<{ port: string; path: string }> }
    const pod = podMonitor!.spec as { selector: Selector; podMetricsEndpoints: Array<{ port: string; path: string }> }
    expect(service.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })])
    expect(pod.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })])
    const selects = (selector: Selector, labels: Record<string, string>): boolean =>
      Object.entries(selector.matchLabels).every(([key, value]) => labels[key] === value) &&
      selector.matchExpressions.every((expression) => expression.operator === 'In' && expression.values.includes(labels[expression.key] ?? ''))

    // Break tried: the monitors' component selector back to [gateway] only made the last two
    // checks fail (the operator was not scraped).
    // Each component's Service and pods carry a port named `metrics` on its metrics port (the
    // operator's is not its admin API port), and both monitors select exactly those two components.
    type Workload = Manifest & { spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ ports: Array<{ name: string; containerPort: number }>; env: Array<{ name: string; value?: string }> }> } } } }
    type Service = Manifest & { spec: { selector: Record<string, string>; ports: Array<{ name: string; port: number; targetPort: string }> } }
    const deployments = byKind('Deployment') as Workload[]
    const services = byKind('Service') as Service[]
    const scraped = { service: new Set<string>(), pod: new Set<string>() }
    for (const component of ['gateway', 'operator']) {
      const deployment = deployments.find((d) => d.spec.template.metadata.labels['app.kubernetes.io/component'] === component)!
      const [container] = deployment.spec.template.spec.containers
      const metricsPort = container!.ports.find((port) => port.name === 'metrics')!.containerPort
      expect(metricsPort, component).toBe(9464)
      expect(container!.ports.find((port) => port.name === 'http')!.containerPort).not.toBe(metricsPort)
      expect(container!.env.find((variable) => variable.name === 'GATEHOUSE_METRICS_PORT')?.value, component).toBe(String(metricsPort))
      const svc = services.find((candidate) => candidate.metadata.labels?.['app.kubernetes.io/component'] === component && candidate.spec.ports.some((port) => port.name === 'http'))!
      expect(svc.spec.ports.find((port) => port.name === 'metrics'), component).toMatchObject({ port: metricsPort, targetPort: 'metrics' })
      if (selects(service.selector, svc.metadata.labels!)) scraped.service.add(component)
      if (selects(pod.selector, deployment.spec.template.metadata.labels)) scraped.pod.add(component)
    }
    expect([...scraped.service]).toEqual(['gateway', 'operator'])
    expect([...scraped.pod]).toEqual(['gateway', 'operator'])
    // No other workload (PostgreSQL, Redis) is selected.
    for (const other of deployments.filter((d) => !['gateway', 'operator'].includes(d.spec.template.metadata.labels['app.kubernetes.io/component'] ?? ''))) {
      expect(selects(pod.selector, other.spec.template.metadata.labels), other.metadata.name).toBe(false)
    }
  })
})

/** Every sample name a gateway's exposition can carry: counters and gauges as named, histograms with their suffixes. */
function exportedNames(exposition: string): string[] {
  const names: string[] = []
  for (const family of parsePrometheusText(exposition).values()) {
    if (family.type === 'histogram') names.push(`${family.name}_bucket`, `${family.name}_sum`, `${family.name}_count`)
    else names.push(family.name)
  }
  return names
}
