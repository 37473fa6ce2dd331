/**
 * The `gatehouse` command: the servers (start, control-plane, gateway, operator) and the operator's
 * tools (validate, keys, admin-key, get, describe). See USAGE.
 */
import { parseArgs } from 'node:util'
import { metricsPortSetting, runGateway, runSidecar, startTracing, type Tracing } from '@gatehouse/gateway'
import { parsePort } from './boot-config.ts'
import { CliError } from './commands/admin-client.ts'
import { processIo, type CommandIo } from './commands/io.ts'
import { createLogger } from './logger.ts'
import { EMBEDDED_NODE_FLAGS, missingNodeFlags } from './node-flags.ts'
import { enableControlPlaneTracing } from '../telemetry/spans.ts'

// Servers and tools are imported when their command runs: a sidecar in an application's pod must
// not load the database drivers and the Kubernetes client (memory and start-up time).

const USAGE = `Usage: gatehouse <command> [options]

Servers:
  start           run Gatehouse embedded: control plane and gateway in one process
  control-plane   run the control plane alone (admin API, snapshot stream for gateways)
  gateway         run a gateway alone against a remote control plane, or from a snapshot file
  operator        run the control plane with the Kubernetes controllers (leader-elected)
  sidecar         run a gateway injected into an application's pod (written by the admission webhook)

Tools:
  validate -f F...             check resources files as a start would; every problem with file and
                               line; exit 0 valid, 1 problems, 2 usage
  keys create --name N [--workspace W] [--scope S ...] [--type workspace|organisation] [--subtype service|user]
  keys list [--workspace W]    keys rotate KEY_ID [--transition-ms MS]    keys revoke KEY_ID
  admin-key                    print a new admin key to use as GATEHOUSE_ADMIN_API_KEY
  init-secrets --secret NAME   in a cluster: create the pepper, encryption key, gateway token and
                               bootstrap admin key Secret once (kept when it exists)
  redis-acl apply|file PATH|rule   the gateways' Redis ACL user: set it with GATEHOUSE_REDIS_ADMIN_URL
                               (user and password from GATEHOUSE_REDIS_URL; every master and replica of a
                               Cluster or Sentinel deployment), write an ACL file, or print the rule
  get workspaces|providers|configs|policies [NAME]
  describe workspaces|providers|configs|policies NAME
  Tools that call the admin API take --url (else GATEHOUSE_URL, else the config file, else
  http://127.0.0.1:8787), the key from GATEHOUSE_ADMIN_API_KEY or the config file (GATEHOUSE_CONFIG,
  default ~/.config/gatehouse/config.json: {"url": "...", "adminKey": "..."}), and -o table|json.

Options for start, control-plane, operator and gateway:
  --host HOST          address to listen on (default 127.0.0.1; gateway: GATEHOUSE_HOST)
  --port PORT          port to listen on (default 8787; control-plane 8788; gateway: GATEHOUSE_PORT)
  --metrics-port PORT  port of GET /metrics (default GATEHOUSE_METRICS_PORT or 9464); start and
                       gateway: 'data' serves it on the data-plane port; control-plane and
                       operator: always a port of its own
  --data-dir DIR       where the embedded database and local secrets live (default .data)
  -f, --file F         resources YAML (Workspace, Provider, Config, v1/Secret); repeatable. Under
                       start, edits to these files are applied while it runs.
  --sso-issuer URL, --sso-client-id ID, --sso-redirect-uri URL, --sso-scopes "S ..."
                       start, control-plane, operator: OpenID Connect sign-in (as GATEHOUSE_SSO_*)

Environment:
  GATEHOUSE_ADMIN_API_KEY   the bootstrap admin key (else one is generated and printed once)
  GATEHOUSE_DATABASE_URL    use PostgreSQL instead of the embedded PGlite database
  GATEHOUSE_KEY_PEPPER, GATEHOUSE_ENCRYPTION_KEY   key hashing pepper, credential encryption key
  GATEHOUSE_GATEWAY_TOKEN   shared token gateways use for the snapshot stream
  GATEHOUSE_JWT_JWKS_URL, GATEHOUSE_JWT_ISSUER, GATEHOUSE_JWT_AUDIENCE   JWT sign-in on the admin API
  GATEHOUSE_SSO_ISSUER, _CLIENT_ID, _CLIENT_SECRET, _REDIRECT_URI, _SCOPES, _DEFAULT_ROLE …   SSO (docs/sso-scim.md)
  GATEHOUSE_CONTROL_PLANE_URL, GATEHOUSE_SNAPSHOT_CACHE, GATEHOUSE_SNAPSHOT_FILE   gateway mode
  GATEHOUSE_METRICS_PORT, GATEHOUSE_METRICS_TOKEN   where /metrics listens; a bearer token for it
  GATEHOUSE_SHUTDOWN_DELAY_MS     on SIGTERM, how long /readyz fails while serving goes on (5000)
  GATEHOUSE_SHUTDOWN_TIMEOUT_MS   then how long requests in flight may finish (30000)
  GATEHOUSE_LOG_LEVEL       pino level (default info)
  GATEHOUSE_LOG_FORMAT      json or pretty (default: pretty on a terminal, else json); ISO times
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME...   OpenTelemetry traces (off
                            when no endpoint is set); GATEHOUSE_TRACE_CONTENT_WORKSPACES: message content
  GATEHOUSE_ACCESS_LOG, GATEHOUSE_ACCESS_LOG_LEVEL, GATEHOUSE_ACCESS_LOG_SAMPLE_RATE
                            one line per data-plane request: on/off (true), level (info), share of successes (1)
`

interface Stoppable {
  close(): Promise<void>
  /** Graceful: readiness fails first, then requests in flight finish (servers that take traffic). */
  drain?(): Promise<void>
}

/** Starts tracing (OTEL_* set) and the control plane's spans with it. */
async function startProcessTracing(serviceName: string): Promise<Tracing | null> {
  const tracing = await startTracing({ serviceName })
  if (tracing) enableControlPlaneTracing()
  return tracing
}

/** `tracing`: spans still queued are exported after the service stopped (OTEL_* set; see docs/observability.md). */
function stopOnSignals(service: Stoppable, logger: ReturnType<typeof createLogger>, tracing: Tracing | null = null): void {
  const shutdown = (signal: string): void => {
    logger.info({ signal }, signal === 'SIGTERM' && service.drain ? 'shutting down: readiness fails, then in-flight requests drain' : 'shutting down')
    // Ctrl-C on a laptop stops at once; SIGTERM (Kubernetes, systemd) drains.
    const stopped = signal === 'SIGTERM' && service.drain ? service.drain() : service.close()
    const stop = tracing === null ? stopped : stopped.then(() => tracing.shutdown())
    void stop.then(() => process.exit(0), (error: unknown) => {
      logger.error({ err: error }, 'shutdown failed')
      process.exit(1)
    })
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
}

function metricsPort(value: string | undefined, env: NodeJS.ProcessEnv): number | 'data' {
  return metricsPortSetting(value ?? env.GATEHOUSE_METRICS_PORT)
}

/** The control plane has no data-plane port: its /metrics always listens on a port of its own. */
function controlPlaneMetricsPort(port: number | 'data'): number {
  if (port === 'data') throw new Error("the control plane serves /metrics on its own port only: set GATEHOUSE_METRICS_PORT to a port number, not 'data'")
  return port
}

function serverOptions(argv: string[], defaultPort: number) {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      'metrics-port': { type: 'string' },
      'data-dir': { type: 'string', default: '.data' },
      file: { type: 'string', short: 'f', multiple: true, default: [] },
      // SSO settings as flags too (docs/sso-scim.md); the client secret only from the environment,
      // never on a command line other processes can read.
      'sso-issuer': { type: 'string' },
      'sso-client-id': { type: 'string' },
      'sso-redirect-uri': { type: 'string' },
      'sso-scopes': { type: 'string' },
    },
    strict: true,
  })
  const ssoFlags = Object.fromEntries(Object.entries({
    GATEHOUSE_SSO_ISSUER: values['sso-issuer'],
    GATEHOUSE_SSO_CLIENT_ID: values['sso-client-id'],
    GATEHOUSE_SSO_REDIRECT_URI: values['sso-redirect-uri'],
    GATEHOUSE_SSO_SCOPES: values['sso-scopes'],
  }).filter(([, value]) => value !== undefined))
  return {
    host: values.host,
    port: parsePort(values.port ?? process.env.GATEHOUSE_PORT, defaultPort),
    metricsPort: metricsPort(values['metrics-port'], process.env),
    dataDir: values['data-dir'],
    resourceFiles: values.file,
    env: { ...process.env, ...ssoFlags },
  }
}

function announceAdminKey(key: string | null): void {
  // Printed once, to the terminal only: it is stored hashed and cannot be shown again.
  if (key) process.stdout.write(`\nBootstrap admin API key (shown once, store it now):\n  ${key}\n\n`)
}

async function start(argv: string[]): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse')
  const missing = process.env.GATEHOUSE_DATABASE_URL ? [] : missingNodeFlags(EMBEDDED_NODE_FLAGS)
  // `make run` passes them; a hand-typed `node operator/bin/gatehouse.js start` may hold 300+ MB more.
  if (missing.length > 0) logger.info({ missing }, `start node with ${EMBEDDED_NODE_FLAGS.join(' ')} to keep the embedded process small (docs/operations.md)`)
  // Before the servers are built: the gateway composes its trace stage only when tracing is on.
  const tracing = await startProcessTracing('gatehouse')
  const { startEmbedded } = await import('./embedded.ts')
  const gatehouse = await startEmbedded({ ...serverOptions(argv, 8787), logger, watchResourceFiles: true })
  announceAdminKey(gatehouse.generatedAdminKey)
  logger.info({ url: gatehouse.url, metricsUrl: gatehouse.metricsUrl, generation: gatehouse.holder.current?.generation, tracing: tracing !== null }, 'Gatehouse is serving')
  stopOnSignals(gatehouse, logger, tracing)
}

async function controlPlane(argv: string[]): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-control-plane')
  const tracing = await startProcessTracing('gatehouse-control-plane')
  const { metricsPort: port, ...options } = serverOptions(argv, 8788)
  const { serveControlPlane } = await import('./control-plane.ts')
  const service = await serveControlPlane({ ...options, metricsPort: controlPlaneMetricsPort(port), logger })
  announceAdminKey(service.generatedAdminKey)
  logger.info({ url: service.url, metricsUrl: service.metricsUrl, generation: service.publisher.latest?.generation }, 'control plane is serving')
  stopOnSignals(service, logger, tracing)
}

async function operator(argv: string[]): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-operator')
  const tracing = await startProcessTracing('gatehouse-operator')
  const { metricsPort: port, ...options } = serverOptions(argv, 8788)
  const { runOperator } = await import('./operator.ts')
  const service = await runOperator({ ...options, metricsPort: controlPlaneMetricsPort(port), logger })
  announceAdminKey(service.generatedAdminKey)
  stopOnSignals(service, logger, tracing)
}

async function gateway(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { host: { type: 'string' }, port: { type: 'string' }, 'metrics-port': { type: 'string' } },
    strict: true,
  })
  const logger = createLogger(process.env, 'gatehouse-gateway')
  const service = await runGateway(process.env, logger, {
    host: values.host,
    port: values.port === undefined ? undefined : parsePort(values.port, 8787),
    metricsPort: values['metrics-port'] === undefined ? undefined : metricsPortSetting(values['metrics-port']),
  })
  logger.info({ url: service.url, metricsUrl: service.metricsUrl, generation: service.holder.current?.generation ?? null }, 'gateway is serving')
  stopOnSignals(service, logger)
}

async function sidecar(): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-sidecar')
  const service = await runSidecar(process.env, logger)
  logger.info({ url: service.url, health: service.healthUrl, generation: service.holder.current?.generation ?? null }, 'sidecar is serving')
  stopOnSignals(service, logger)
}

/** Commands that run and exit, with an exit status. */
const TOOLS: Record<string, (argv: string[], io: CommandIo) => Promise<number>> = {
  validate: async (argv, io) => (await import('./commands/validate.ts')).runValidate(argv, io),
  keys: async (argv, io) => (await import('./commands/keys.ts')).runKeys(argv, io),
  'admin-key': async (argv, io) => (await import('./commands/keys.ts')).runAdminKey(argv, io),
  get: async (argv, io) => (await import('./commands/resources.ts')).runGet(argv, io),
  describe: async (argv, io) => (await import('./commands/resources.ts')).runDescribe(argv, io),
  'init-secrets': async (argv, io) => (await import('./commands/init-secrets.ts')).runInitSecrets(argv, io),
  'redis-acl': async (argv, io) => (await import('./commands/redis-acl.ts')).runRedisAcl(argv, io),
}

/** The message for a failure to start or run a command, with what to do where we can tell. */
export function describeFailure(error: unknown): string {
  // By name: importing resources/apply.ts here would load the store into every sidecar.
  if (error instanceof Error && error.name === 'ResourceError') return `invalid resources: ${error.message}`
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE') {
    const { address, port } = error as { address?: string; port?: number }
    return `${address ?? 'the address'}:${port ?? '?'} is already in use: stop what listens there, or choose another with --port (or --metrics-port for the metrics port)`
  }
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen') return `${(error as Error).message}: ports below 1024 need privileges; choose another with --port`
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    return `${(error as Error).message} (see gatehouse help)`
  }
  return (error as Error).message
}

/** Runs one command; returns its exit status (servers keep running after it returns 0). */
export async function runCommand(argv: string[], io: CommandIo = processIo): Promise<number> {
  const [command, ...rest] = argv
  try {
    const tool = command === undefined ? undefined : TOOLS[command]
    if (tool) return await tool(rest, io)
    switch (command) {
      case 'start':
        await start(rest)
        return 0
      case 'control-plane':
        await controlPlane(rest)
        return 0
      case 'gateway':
        await gateway(rest)
        return 0
      case 'operator':
        await operator(rest)
        return 0
      case 'sidecar':
        await sidecar()
        return 0
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(USAGE)
        return 0
      default:
        io.stderr(`gatehouse: unknown command '${command}'\n\n${USAGE}`)
        return 2
    }
  } catch (error) {
    io.stderr(`gatehouse: ${describeFailure(error)}\n`)
    if (error instanceof CliError) return error.exitCode
    const code = (error as NodeJS.ErrnoException).code
    return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS') ? 2 : 1
  }
}

export async function main(argv: string[]): Promise<void> {
  const status = await runCommand(argv)
  if (status !== 0) process.exitCode = status
}
