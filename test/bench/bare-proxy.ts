/**
 * The Node floor for the benchmark: the thinnest reverse proxy Node can be. A node:http server
 * whose every request is relayed through an undici Pool's `stream()` to one upstream origin: the
 * request body streams up, the response body streams straight into the client response, nothing
 * is parsed, and only hop-by-hop headers are dropped. Whatever Gatehouse costs on top of this is
 * its own work (auth, validation, translation), not Node's.
 *
 *   node test/bench/bare-proxy.ts --upstream http://127.0.0.1:PORT
 *
 * Prints one JSON line `{"url"}` once listening on 127.0.0.1 (ephemeral port); stops on SIGTERM/SIGINT.
 */
import { createServer } from 'node:http'
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'

/** RFC 9110 §7.6.1 connection-specific headers, plus `host`, which belongs to the upstream origin. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host'])

function endToEnd(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value
  }
  return out
}

const { values } = parseArgs({ options: { upstream: { type: 'string' } } })
if (!values.upstream) {
  process.stderr.write('usage: node test/bench/bare-proxy.ts --upstream http://127.0.0.1:PORT\n')
  process.exit(2)
}
// No connection cap: an in-flight request must never wait for a pooled socket.
const pool = new Pool(values.upstream, { keepAliveTimeout: 60_000 })

const server = createServer((req, res) => {
  pool.stream(
    { path: req.url ?? '/', method: req.method as 'POST', headers: endToEnd(req.headers) as Record<string, string>, body: req },
    ({ statusCode, headers }) => {
      res.writeHead(statusCode, endToEnd(headers))
      return res
    },
    (error) => {
      if (!error) return
      if (res.headersSent) res.destroy()
      else res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway')
    },
  )
})
server.keepAliveTimeout = 65_000

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n')
})

const stop = (): void => {
  server.close()
  server.closeAllConnections()
  void pool.close().finally(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
