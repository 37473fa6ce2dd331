/**
 * The `gatehouse` command.
 *   gatehouse start [--host 127.0.0.1] [--port 8787] [--data-dir DIR] [-f resources.yaml ...]
 *   gatehouse control-plane [--host] [--port 8788] [--data-dir DIR] [-f resources.yaml ...]
 *   gatehouse gateway        (configured by environment variables; see gateway/src/main.ts)
 *   gatehouse operator [--host] [--port 8788]   (control plane + Kubernetes controllers; see ./operator.ts)
 *   gatehouse sidecar        (an injected sidecar; see gateway/src/sidecar/main.ts)
 *
 * Each command imports what it runs when it runs: a sidecar in an application's pod must not load
 * the database drivers and the Kubernetes client (memory and start-up time).
 */
import { parseArgs } from 'node:util'
import { createLogger } from './logger.ts'

const USAGE = `Usage: gatehouse <command> [options]

Commands:
  start           run Gatehouse embedded: control plane and gateway in one process
  control-plane   run the control plane alone (admin API, snapshot stream for gateways)
  gateway         run a gateway alone against a remote control plane, or from a snapshot file
  operator        run the control plane with the Kubernetes controllers (leader-elected)
  sidecar         run a gateway injected into an application's pod (written by the admission webhook)

Options for start and control-plane:
  --host HOST     address to listen on (default 127.0.0.1)
  --port PORT     port to listen on (default 8787; control-plane 8788)
  --data-dir DIR  where the embedded database and local secrets live (default .data)
  -f, --file F    resources YAML (Workspace, Provider, Config, v1/Secret); repeatable

Environment:
  GATEHOUSE_ADMIN_API_KEY   the bootstrap admin key (else one is generated and printed once)
  GATEHOUSE_DATABASE_URL    use PostgreSQL instead of the embedded PGlite database
  GATEHOUSE_KEY_PEPPER, GATEHOUSE_ENCRYPTION_KEY   key hashing pepper, credential encryption key
  GATEHOUSE_GATEWAY_TOKEN   shared token gateways use for the snapshot stream
  GATEHOUSE_JWT_JWKS_URL, GATEHOUSE_JWT_ISSUER, GATEHOUSE_JWT_AUDIENCE   JWT sign-in on the admin API
  GATEHOUSE_CONTROL_PLANE_URL, GATEHOUSE_SNAPSHOT_CACHE, GATEHOUSE_SNAPSHOT_FILE   gateway mode
  GATEHOUSE_SIDECAR_DEPLOYMENT, GATEHOUSE_SIDECAR_TOKEN_FILE   sidecar mode (written by the webhook)
  GATEHOUSE_WEBHOOK_PORT, GATEHOUSE_SIDECAR_IMAGE, GATEHOUSE_SIDECAR_CONTROL_PLANE_URL   operator: serve
                            the sidecar injection webhook (all settings: operator/src/webhook/settings.ts)
  GATEHOUSE_LOG_LEVEL       pino level (default info)
`

interface Stoppable {
  close(): Promise<void>
}

function stopOnSignals(service: Stoppable, logger: ReturnType<typeof createLogger>): void {
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'shutting down')
    void service.close().then(() => process.exit(0))
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
}

async function serverOptions(argv: string[], defaultPort: number) {
  const { parsePort } = await import('./boot-config.ts')
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      'data-dir': { type: 'string', default: '.data' },
      file: { type: 'string', short: 'f', multiple: true, default: [] },
    },
    strict: true,
  })
  return {
    host: values.host,
    port: parsePort(values.port ?? process.env.GATEHOUSE_PORT, defaultPort),
    dataDir: values['data-dir'],
    resourceFiles: values.file,
    env: process.env,
  }
}

function announceAdminKey(key: string | null): void {
  // Printed once, to the terminal only: it is stored hashed and cannot be shown again.
  if (key) process.stdout.write(`\nBootstrap admin API key (shown once, store it now):\n  ${key}\n\n`)
}

async function start(argv: string[]): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse')
  const { startEmbedded } = await import('./embedded.ts')
  const gatehouse = await startEmbedded({ ...(await serverOptions(argv, 8787)), logger })
  announceAdminKey(gatehouse.generatedAdminKey)
  logger.info({ url: gatehouse.url, generation: gatehouse.holder.current?.generation }, 'Gatehouse is serving')
  stopOnSignals(gatehouse, logger)
}

async function controlPlane(argv: string[]): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-control-plane')
  const { serveControlPlane } = await import('./control-plane.ts')
  const service = await serveControlPlane({ ...(await serverOptions(argv, 8788)), logger })
  announceAdminKey(service.generatedAdminKey)
  logger.info({ url: service.url, generation: service.publisher.latest?.generation }, 'control plane is serving')
  stopOnSignals(service, logger)
}

async function operator(argv: string[]): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-operator')
  const { runOperator } = await import('./operator.ts')
  const service = await runOperator({ ...(await serverOptions(argv, 8788)), logger })
  announceAdminKey(service.generatedAdminKey)
  stopOnSignals(service, logger)
}

async function gateway(): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-gateway')
  const { runGateway } = await import('@gatehouse/gateway')
  const service = await runGateway(process.env, logger)
  logger.info({ url: service.url, generation: service.holder.current?.generation ?? null }, 'gateway is serving')
  stopOnSignals(service, logger)
}

async function sidecar(): Promise<void> {
  const logger = createLogger(process.env, 'gatehouse-sidecar')
  const { runSidecar } = await import('@gatehouse/gateway')
  const service = await runSidecar(process.env, logger)
  logger.info({ url: service.url, health: service.healthUrl, generation: service.holder.current?.generation ?? null }, 'sidecar is serving')
  stopOnSignals(service, logger)
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  try {
    switch (command) {
      case 'start':
        await start(rest)
        return
      case 'control-plane':
        await controlPlane(rest)
        return
      case 'gateway':
        await gateway()
        return
      case 'operator':
        await operator(rest)
        return
      case 'sidecar':
        await sidecar()
        return
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE)
        return
      default:
        process.stderr.write(`gatehouse: unknown command '${command}'\n\n${USAGE}`)
        process.exitCode = 2
    }
  } catch (error) {
    // By name: importing resources/apply.ts here would load it into every sidecar.
    if (error instanceof Error && error.name === 'ResourceError') {
      process.stderr.write(`gatehouse: invalid resources: ${error.message}\n`)
    } else {
      process.stderr.write(`gatehouse: ${(error as Error).message}\n`)
    }
    process.exitCode = 1
  }
}
