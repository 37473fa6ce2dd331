/**
 * Runs one provider simulator as its own process, for the benchmark and for manual poking:
 *
 *   node test/simulators/cli.ts openai --port 0 --latency-ms 0 --chunks 16 --token-interval-ms 0
 *
 * Prints one JSON line `{"provider","url","baseUrl"}` on stdout once listening; stops on SIGINT/SIGTERM.
 * Nothing is recorded unless `--record N` asks for it, so a long benchmark does not grow memory.
 */
import { parseArgs } from 'node:util'
import { startSimulator } from './base.ts'
import { providers } from './index.ts'

function integer(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${flag} must be a non-negative integer, got ${value}`)
  return parsed
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      'latency-ms': { type: 'string' },
      'token-interval-ms': { type: 'string' },
      chunks: { type: 'string' },
      content: { type: 'string' },
      'api-key': { type: 'string', multiple: true },
      record: { type: 'string' },
    },
  })
  const name = positionals[0]
  const provider = name ? providers[name] : undefined
  if (!provider) {
    process.stderr.write(`usage: node test/simulators/cli.ts <${Object.keys(providers).join('|')}> [--port N] [--latency-ms N] [--chunks N] [--token-interval-ms N]\n`)
    process.exitCode = 2
    return
  }
  const simulator = await startSimulator(provider, {
    port: integer('port', values.port, 0),
    latencyMs: integer('latency-ms', values['latency-ms'], 0),
    tokenIntervalMs: integer('token-interval-ms', values['token-interval-ms'], 0),
    chunks: integer('chunks', values.chunks, 16),
    recordLimit: integer('record', values.record, 0),
    ...(values.content !== undefined ? { content: values.content } : {}),
    // `--api-key any` accepts every credential (the benchmark sends the same bytes to the
    // simulator directly and through the gateway); otherwise only the listed ones, by default
    // SIMULATOR_API_KEY.
    ...(values['api-key'] ? { apiKeys: values['api-key'].includes('any') ? 'any' : values['api-key'] } : {}),
  })
  process.stdout.write(JSON.stringify({ provider: simulator.name, url: simulator.url, baseUrl: simulator.baseUrl }) + '\n')
  const stop = (): void => {
    void simulator.close().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
