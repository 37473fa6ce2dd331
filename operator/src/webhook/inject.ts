/**
 * What the webhook does to an opted-in pod, as a JSON Patch: the gateway as a native sidecar (an
 * init container with restartPolicy Always, first, so it is started before the application and
 * stopped after it), a projected ServiceAccount token for audience gatehouse, a memory-backed
 * cache directory, and the SDKs' base-URL variables in every application container. Nothing
 * secret is written: the token is projected by the kubelet, the placeholder API keys only satisfy
 * SDKs that insist on one (the sidecar ignores them). Pure: the caller looks objects up.
 */
import { SIDECAR_TOKEN_AUDIENCE } from '@gatehouse/gateway/snapshot'

export const INJECT_LABEL = 'gatehouse.dev/inject'
export const ANNOTATIONS = {
  deployment: 'gatehouse.dev/deployment',
  port: 'gatehouse.dev/port',
  logLevel: 'gatehouse.dev/log-level',
  cpu: 'gatehouse.dev/cpu',
  memory: 'gatehouse.dev/memory',
  memoryLimit: 'gatehouse.dev/memory-limit',
  accessLog: 'gatehouse.dev/access-log',
  accessLogSampleRate: 'gatehouse.dev/access-log-sample-rate',
  injected: 'gatehouse.dev/injected',
} as const
export const SIDECAR_CONTAINER = 'gatehouse-sidecar'
export const TOKEN_VOLUME = 'gatehouse-token'
export const CACHE_VOLUME = 'gatehouse-cache'
export const TOKEN_DIRECTORY = '/var/run/secrets/gatehouse.dev/token'
export const CACHE_DIRECTORY = '/var/run/gatehouse'
/** Not a credential: SDKs refuse to start without some key, and the sidecar never reads it. */
export const PLACEHOLDER_API_KEY = 'gatehouse-sidecar-no-key-needed'
/**
 * The script of every `node` command in the image, the sidecar's and the Dockerfile's entrypoint
 * (node-flags.test.ts checks it): the production build of the `gatehouse` command, bundled and
 * minified (operator/scripts/bundle.ts), relative to the image's working directory.
 */
export const IMAGE_COMMAND_SCRIPT = 'dist/gatehouse.mjs'

/**
 * V8 flags of the sidecar's `node` command (Node refuses them in NODE_OPTIONS). An idle sidecar's
 * budget is 80 MB: `--liftoff-only` keeps undici's HTTP parser (WebAssembly) on V8's baseline
 * compiler, whose optimising tier held 8 MB more; `--max-opt=2` stops JavaScript at Maglev, without
 * TurboFan, another 5 MB. Measured with test/bench/sidecar-start.ts: idle 104 -> 91 MB, and over
 * 5000 sequential chat completions no more sidecar CPU per request (392-440 against 426-500 µs);
 * one pod's traffic rarely runs long enough for TurboFan to pay back its compiling. The image's
 * compile cache is warmed with these (Node keys it by V8 flags; node-flags.test.ts checks).
 */
export const SIDECAR_NODE_FLAGS: readonly string[] = ['--liftoff-only', '--max-opt=2']

/**
 * Environment of the sidecar container, beside the image's (MALLOC_ARENA_MAX=2, SERVER_ENV).
 *  - A small young generation: about 15 MB less resident memory for one pod's traffic.
 *  - glibc's malloc hands blocks from 32 KiB up to mmap and gives them back on free, and returns
 *    its heap's free top above 32 KiB, instead of raising both thresholds as large blocks come and
 *    go (its default). Idle after start 79 -> 76.5 MB, and after 4,000 chat completions 125-143 ->
 *    103-109 MB, for about 10 % more CPU per request in that run (test/bench/sidecar-start.ts;
 *    docs/sidecar.md). A sidecar's budget is memory; a central gateway keeps glibc's defaults.
 *  - No jemalloc (the image preloads it into servers, cli/node-flags.ts SERVER_ALLOCATOR_PATH):
 *    idle after start it held 80.5 to 83.4 MB against glibc's 77.0 (sidecar-start.ts, medians of
 *    3, 2026-12-08), where glibc with the settings above already keeps one pod's traffic low.
 */
export const SIDECAR_ENV: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '--max-semi-space-size=1',
  MALLOC_MMAP_THRESHOLD_: '32768',
  MALLOC_TRIM_THRESHOLD_: '32768',
  LD_PRELOAD: '',
}
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']
/** Kubernetes resource quantity (e.g. 50m, 64Mi, 0.5). */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|Ki|Mi|Gi)?$/
const TOKEN_EXPIRATION_SECONDS = 3600

export interface SidecarSettings {
  image: string
  imagePullPolicy?: string
  /** The control plane's URL as pods reach it (the operator Service). */
  controlPlaneUrl: string
  defaultPort: number
  healthPort: number
  defaultLogLevel: string
  resources: { cpu: string; memory: string; memoryLimit: string }
  /** Tracing and access-log variables every sidecar gets (webhook/settings.ts; never a secret). */
  telemetryEnv: EnvVar[]
}

/**
 * The telemetry settings a sidecar may be given, in the gateway's own names: where traces go and how
 * they are sampled, and the access log. Not OTEL_EXPORTER_OTLP_HEADERS: it may carry a collector's
 * credential, and nothing secret is written into a pod spec.
 */
export const SIDECAR_TELEMETRY_SETTINGS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_PROPAGATORS',
  'GATEHOUSE_TRACE_CONTENT_WORKSPACES',
  'GATEHOUSE_ACCESS_LOG',
  'GATEHOUSE_ACCESS_LOG_LEVEL',
  'GATEHOUSE_ACCESS_LOG_SAMPLE_RATE',
] as const

export interface EnvVar {
  name: string
  value?: string
  valueFrom?: unknown
}

interface Container {
  name: string
  env?: EnvVar[]
  ports?: Array<{ containerPort?: number; [field: string]: unknown }>
  restartPolicy?: string
  [field: string]: unknown
}

export interface Pod {
  metadata?: { name?: string; generateName?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  spec?: { serviceAccountName?: string; containers?: Container[]; initContainers?: Container[]; volumes?: unknown[] }
}

export type PatchOperation = { op: 'add' | 'replace'; path: string; value: unknown }

export class InjectionRefused extends Error {
  override name = 'InjectionRefused'
}

/** Whether the pod already carries the sidecar (re-admission, or reinvocation). */
export function alreadyInjected(pod: Pod): boolean {
  const named = (list: Container[] | undefined) => (list ?? []).some((container) => container.name === SIDECAR_CONTAINER)
  return named(pod.spec?.initContainers) || named(pod.spec?.containers)
}

export interface InjectionOptions {
  /** Annotations that choose the sidecar's settings; the pod's, over its namespace's. */
  annotations: Record<string, string>
  /** `namespace/name` of the Gatehouse Deployment, already checked to exist and admit the pod. */
  deploymentRef: string
  settings: SidecarSettings
  /** The CA bundle (PEM) of an https control plane; written into the sidecar (a CA is public). */
  controlPlaneCa?: string | null
}

/** Reads and checks the annotations; throws InjectionRefused with a message naming the one at fault. */
export function sidecarOptions(pod: Pod, annotations: Record<string, string>, settings: SidecarSettings) {
  const port = annotations[ANNOTATIONS.port] === undefined ? settings.defaultPort : Number(annotations[ANNOTATIONS.port])
  if (!Number.isInteger(port) || port < 1024 || port > 65535 || port === settings.healthPort) {
    throw new InjectionRefused(`${ANNOTATIONS.port}: '${annotations[ANNOTATIONS.port]}' is not a port between 1024 and 65535 (other than ${settings.healthPort})`)
  }
  const taken = (pod.spec?.containers ?? []).some((container) => (container.ports ?? []).some((p) => p.containerPort === port || p.containerPort === settings.healthPort))
  if (taken) throw new InjectionRefused(`${ANNOTATIONS.port}: port ${port} or ${settings.healthPort} is already used by a container of the pod; choose another with ${ANNOTATIONS.port}`)
  const logLevel = annotations[ANNOTATIONS.logLevel] ?? settings.defaultLogLevel
  if (!LOG_LEVELS.includes(logLevel)) throw new InjectionRefused(`${ANNOTATIONS.logLevel}: '${logLevel}' is not one of ${LOG_LEVELS.join(', ')}`)
  const quantity = (annotation: string, fallback: string): string => {
    const value = annotations[annotation] ?? fallback
    if (!QUANTITY.test(value)) throw new InjectionRefused(`${annotation}: '${value}' is not a resource quantity (e.g. 50m, 64Mi)`)
    return value
  }
  // The chart's telemetry settings, then the pod's access-log annotations over them (the values the
  // sidecar accepts for GATEHOUSE_ACCESS_LOG and _SAMPLE_RATE, gateway/src/telemetry/access-log.ts).
  const telemetry = new Map(settings.telemetryEnv.map((variable) => [variable.name, variable.value ?? '']))
  const accessLog = annotations[ANNOTATIONS.accessLog]
  if (accessLog !== undefined) {
    if (accessLog !== 'true' && accessLog !== 'false') throw new InjectionRefused(`${ANNOTATIONS.accessLog}: must be true or false, got '${accessLog}'`)
    telemetry.set('GATEHOUSE_ACCESS_LOG', accessLog)
  }
  const sampleRate = annotations[ANNOTATIONS.accessLogSampleRate]
  if (sampleRate !== undefined) {
    const rate = sampleRate.trim() === '' ? NaN : Number(sampleRate)
    if (!(rate >= 0 && rate <= 1)) throw new InjectionRefused(`${ANNOTATIONS.accessLogSampleRate}: must be a number from 0 to 1, got '${sampleRate}'`)
    telemetry.set('GATEHOUSE_ACCESS_LOG_SAMPLE_RATE', sampleRate)
  }
  return {
    port,
    logLevel,
    telemetryEnv: [...telemetry].map(([name, value]) => ({ name, value })),
    cpu: quantity(ANNOTATIONS.cpu, settings.resources.cpu),
    memory: quantity(ANNOTATIONS.memory, settings.resources.memory),
    memoryLimit: quantity(ANNOTATIONS.memoryLimit, settings.resources.memoryLimit),
  }
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1')
}

export function sidecarContainer(options: InjectionOptions, chosen: ReturnType<typeof sidecarOptions>): Container {
  const { settings } = options
  return {
    name: SIDECAR_CONTAINER,
    image: settings.image,
    ...(settings.imagePullPolicy ? { imagePullPolicy: settings.imagePullPolicy } : {}),
    // Native sidecar: started before the application containers, stopped after them.
    restartPolicy: 'Always',
    command: ['node', ...SIDECAR_NODE_FLAGS, IMAGE_COMMAND_SCRIPT, 'sidecar'],
    env: [
      { name: 'GATEHOUSE_CONTROL_PLANE_URL', value: settings.controlPlaneUrl },
      ...(options.controlPlaneCa ? [{ name: 'GATEHOUSE_CONTROL_PLANE_CA', value: options.controlPlaneCa }] : []),
      { name: 'GATEHOUSE_SIDECAR_DEPLOYMENT', value: options.deploymentRef },
      { name: 'GATEHOUSE_SIDECAR_TOKEN_FILE', value: `${TOKEN_DIRECTORY}/token` },
      { name: 'GATEHOUSE_SNAPSHOT_CACHE', value: CACHE_DIRECTORY },
      { name: 'GATEHOUSE_PORT', value: String(chosen.port) },
      { name: 'GATEHOUSE_HEALTH_PORT', value: String(settings.healthPort) },
      { name: 'GATEHOUSE_LOG_LEVEL', value: chosen.logLevel },
      ...Object.entries(SIDECAR_ENV).map(([name, value]) => ({ name, value })),
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ...chosen.telemetryEnv,
    ],
    ports: [{ name: 'gh-health', containerPort: settings.healthPort, protocol: 'TCP' }],
    resources: { requests: { cpu: chosen.cpu, memory: chosen.memory }, limits: { memory: chosen.memoryLimit } },
    // The application starts once the sidecar has a snapshot (native sidecars gate on startup).
    startupProbe: { httpGet: { path: '/readyz', port: settings.healthPort }, periodSeconds: 1, failureThreshold: 120 },
    readinessProbe: { httpGet: { path: '/readyz', port: settings.healthPort }, periodSeconds: 10 },
    livenessProbe: { httpGet: { path: '/livez', port: settings.healthPort }, periodSeconds: 20 },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [
      { name: TOKEN_VOLUME, mountPath: TOKEN_DIRECTORY, readOnly: true },
      { name: CACHE_VOLUME, mountPath: CACHE_DIRECTORY },
    ],
  }
}

export function sidecarVolumes(): unknown[] {
  return [
    {
      name: TOKEN_VOLUME,
      projected: { sources: [{ serviceAccountToken: { audience: SIDECAR_TOKEN_AUDIENCE, expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } }] },
    },
    { name: CACHE_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
  ]
}

/** The JSON Patch that injects the sidecar (the caller has checked `alreadyInjected`). */
export function injectionPatch(pod: Pod, options: InjectionOptions): PatchOperation[] {
  const chosen = sidecarOptions(pod, options.annotations, options.settings)
  const patch: PatchOperation[] = []
  const spec = pod.spec ?? {}
  const sidecar = sidecarContainer(options, chosen)
  if (spec.initContainers && spec.initContainers.length > 0) patch.push({ op: 'add', path: '/spec/initContainers/0', value: sidecar })
  else patch.push({ op: 'add', path: '/spec/initContainers', value: [sidecar] })
  if (spec.volumes && spec.volumes.length > 0) for (const volume of sidecarVolumes()) patch.push({ op: 'add', path: '/spec/volumes/-', value: volume })
  else patch.push({ op: 'add', path: '/spec/volumes', value: sidecarVolumes() })

  const base = `http://127.0.0.1:${chosen.port}`
  const wanted: EnvVar[] = [
    { name: 'OPENAI_BASE_URL', value: `${base}/v1` },
    { name: 'ANTHROPIC_BASE_URL', value: base },
    { name: 'OPENAI_API_KEY', value: PLACEHOLDER_API_KEY },
    { name: 'ANTHROPIC_API_KEY', value: PLACEHOLDER_API_KEY },
  ]
  ;(spec.containers ?? []).forEach((container, index) => {
    // What the application sets itself wins: overriding a base URL is the container's choice.
    const own = new Set((container.env ?? []).map((variable) => variable.name))
    const added = wanted.filter((variable) => !own.has(variable.name))
    if (added.length === 0) return
    if (container.env === undefined) patch.push({ op: 'add', path: `/spec/containers/${index}/env`, value: added })
    else for (const variable of added) patch.push({ op: 'add', path: `/spec/containers/${index}/env/-`, value: variable })
  })

  const marker = escapePointer(ANNOTATIONS.injected)
  if (pod.metadata?.annotations === undefined) patch.push({ op: 'add', path: '/metadata/annotations', value: { [ANNOTATIONS.injected]: options.deploymentRef } })
  else patch.push({ op: 'add', path: `/metadata/annotations/${marker}`, value: options.deploymentRef })
  return patch
}
