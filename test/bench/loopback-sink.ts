/**
 * A loopback sink for what the benchmark's gateways send besides their answers: OTLP/HTTP traces
 * (`POST /v1/traces`, protobuf or JSON) and usage batches (`POST` to the control plane's ingest
 * route). Counts requests and bytes, keeps nothing. The feature scenario's traced and metering
 * gateways send to it, so their export path (batching, serialising, sending) is part of what they
 * are measured for.
 *
 *   node test/bench/loopback-sink.ts     prints {"url"} once listening; SIGTERM stops it
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { USAGE_INGEST_PATH } from '../../gateway/src/snapshot/usage-record.ts'

const ACCEPTED_PATHS = new Set(['/v1/traces', USAGE_INGEST_PATH])

let requests = 0
let bytes = 0
const server = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => {
    bytes += chunk.length
  })
  request.on('end', () => {
    requests++
    const json = (request.headers['content-type'] ?? '').startsWith('application/json')
    response.writeHead(ACCEPTED_PATHS.has(request.url ?? '') ? 200 : 404, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined)
  })
})
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n')
})
const stop = (): void => {
  process.stderr.write(`loopback sink: ${requests} requests, ${bytes} bytes\n`)
  server.close(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
