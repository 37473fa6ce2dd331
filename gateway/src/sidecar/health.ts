/**
 * The sidecar's probe port. The data plane listens on loopback only, which the kubelet cannot
 * reach, so startup and readiness probes get this separate listener that answers nothing but
 * /livez and /readyz (ready once a snapshot is loaded).
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { nodeHttp } from '../core/node-http.ts'

export async function serveHealth(host: string, port: number, ready: () => boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = nodeHttp.createServer((request, response) => {
    const path = request.url?.split('?')[0]
    const status = path === '/livez' ? 200 : path === '/readyz' ? (ready() ? 200 : 503) : 404
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ status: status === 200 ? 'ok' : status === 503 ? 'not_ready' : 'not_found' }))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const { address, port: bound } = server.address() as AddressInfo
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
