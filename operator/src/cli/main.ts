/**
 * The `gatehouse` command.
 *   gatehouse start [--host 127.0.0.1] [--port 8787] [--data-dir DIR] [-f resources.yaml ...]
 */
import { parseArgs } from 'node:util'
import { ResourceError } from '../resources/apply.ts'
import { parsePort } from './boot-config.ts'
import { startEmbedded } from './embedded.ts'
import { createLogger } from './logger.ts'

const USAGE = `Usage: gatehouse <command> [options]

Commands:
  start           run Gatehouse embedded: control plane and gateway in one process

Options for start:
  --host HOST     address to listen on (default 127.0.0.1)
  --port PORT     port to listen on (default 8787)
  --data-dir DIR  where the embedded database and local secrets live (default .data)
  -f, --file F    resources YAML (Workspace, Provider, Config, v1/Secret); repeatable

Environment:
  GATEHOUSE_ADMIN_API_KEY   the bootstrap admin key (else one is generated and printed once)
  GATEHOUSE_DATABASE_URL    use PostgreSQL instead of the embedded PGlite database
  GATEHOUSE_KEY_PEPPER, GATEHOUSE_ENCRYPTION_KEY   key hashing pepper, credential encryption key
  GATEHOUSE_LOG_LEVEL       pino level (default info)
`

async function start(argv: string[]): Promise<void> {
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
  const logger = createLogger(process.env, 'gatehouse')
  const gatehouse = await startEmbedded({
    host: values.host,
    port: parsePort(values.port ?? process.env.GATEHOUSE_PORT, 8787),
    dataDir: values['data-dir'],
    resourceFiles: values.file,
    env: process.env,
    logger,
  })
  if (gatehouse.generatedAdminKey) {
    // Printed once, to the terminal only: it is stored hashed and cannot be shown again.
    process.stdout.write(`\nBootstrap admin API key (shown once, store it now):\n  ${gatehouse.generatedAdminKey}\n\n`)
  }
  logger.info({ url: gatehouse.url, generation: gatehouse.holder.current?.generation }, 'Gatehouse is serving')
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'shutting down')
    void gatehouse.close().then(() => process.exit(0))
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  try {
    switch (command) {
      case 'start':
        await start(rest)
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
    if (error instanceof ResourceError) {
      process.stderr.write(`gatehouse: invalid resources: ${error.message}\n`)
    } else {
      process.stderr.write(`gatehouse: ${(error as Error).message}\n`)
    }
    process.exitCode = 1
  }
}
