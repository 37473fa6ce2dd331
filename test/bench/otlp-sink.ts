/**
 * A loopback OTLP/HTTP trace sink for the benchmark: accepts every `POST /v1/traces` (protobuf or
 * JSON), counts requests and bytes, keeps nothing. The tracing scenario's gateways export to it,
 * so the export path (batching, serialising, sending) is part of what they are measured for.
 *
 *   node test/bench/otlp-sink.ts     prints {"url"} once listening; SIGTERM stops it
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

let requests = 0
let bytes = 0
const server = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => {
    bytes += chunk.length
  })
  request.on('end', () => {
    requests++
    const json = (request.headers['content-type'] ?? '').startsWith('application/json')
    response.writeHead(request.url === '/v1/traces' ? 200 : 404, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined)
  })
})
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n')
})
const stop = (): void => {
  process.stderr.write(`otlp sink: ${requests} export requests, ${bytes} bytes\n`)
  server.close(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
