/**
 * `GET /v1/realtime?model=...`: a WebSocket upgrade proxied to the provider's realtime WebSocket
 * with the stored credential. The caller's Gatehouse key comes from the headers, or, for browsers
 * and SDKs that cannot set headers, from the `openai-insecure-api-key.<key>` subprotocol (which is
 * never sent on). The upstream socket opens first, so a refusal reaches the caller as an HTTP error;
 * then frames flow both ways untouched, and either side closing closes the other. The provider's
 * `response.done` events are tallied on the way (usage/realtime-usage.ts) for the session's record.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type * as Ws from 'ws'
import type { WebSocket, WebSocketServer, RawData } from 'ws'
import { GatewayError, toGatewayError } from '../../core/errors.ts'
import { onDemand } from '../../core/on-demand.ts'
import { randomTraceId } from '../../core/random-id.ts'
import { header } from '../../core/headers.ts'
import { buildRoutePipeline, type PipelineDeps } from '../../pipeline/build.ts'
import { refuseRepeatedCredentials } from '../../pipeline/authenticate.ts'
import { ExchangeContext, readTrace } from '../../pipeline/context.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import { newFacts, type Exchange, type SessionAnswer } from '../../pipeline/stage.ts'
import type { RouteTarget } from '../../routing/target.ts'
import { errorFromProvider } from '../../upstream/provider-errors.ts'
import { ssrfSocketOptions } from '../../upstream/ssrf.ts'
import { applyAuth, type SignableRequest } from '../../upstream/signers/index.ts'
import { nodeHttp } from '../../core/node-http.ts'
import { notReady } from '../pipeline-route.ts'
import { injectTraceContext } from '../../core/tracing.ts'
import { RealtimeUsageTally } from '../../usage/realtime-usage.ts'

export const REALTIME_PATH = '/v1/realtime'
/** Loaded with the first realtime session: most gateways (and sidecars) never open one. */
const ws = onDemand<typeof Ws>('ws')
const KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.'
/** Headers of the upgrade request that mean something to the provider's realtime API. */
const FORWARDED_HEADERS = ['openai-beta'] as const
const MAX_ERROR_BODY_BYTES = 64 * 1024

function offeredProtocols(request: IncomingMessage): string[] {
  const raw = header(request.headers, 'sec-websocket-protocol')
  return raw === undefined ? [] : raw.split(',').map((protocol) => protocol.trim()).filter((protocol) => protocol !== '')
}

function keyFromProtocols(protocols: readonly string[]): string | undefined {
  return protocols.find((protocol) => protocol.startsWith(KEY_PROTOCOL_PREFIX))?.slice(KEY_PROTOCOL_PREFIX.length)
}

/** Answers a refused upgrade on the raw socket, in the same error envelope as every other route. */
function refuse(socket: Duplex, error: unknown, traceId: string, extraHeaders: Readonly<Record<string, string>> = {}): void {
  const gatewayError = toGatewayError(error)
  const body = JSON.stringify(gatewayError.toBody())
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-gateway-trace-id': traceId,
    connection: 'close',
    ...extraHeaders,
    ...gatewayError.headers,
  }
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  if (socket.writable) socket.end(`HTTP/1.1 ${gatewayError.status} ${nodeHttp.STATUS_CODES[gatewayError.status] ?? 'Error'}\r\n${head}\r\n${body}`)
  else socket.destroy()
}

/** The provider's realtime address: its base URL with a WebSocket scheme, `/realtime`, and the caller's query with the provider's model name. */
function upstreamUrl(target: RouteTarget, query: URLSearchParams): URL {
  const base = target.provider.endpoint.baseUrl
  const url = new URL(base.href)
  url.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:'
  url.pathname = `${base.pathname.replace(/\/$/, '')}/realtime`
  const forwarded = new URLSearchParams(query)
  if (target.upstreamModel !== '') forwarded.set('model', target.upstreamModel)
  url.search = forwarded.toString()
  return url
}

async function readBounded(response: IncomingMessage): Promise<unknown> {
  let text = ''
  for await (const chunk of response) {
    text += String(chunk)
    if (text.length > MAX_ERROR_BODY_BYTES) break
  }
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function flatHeaders(response: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  return out
}

/** Closing codes that may not be sent in a close frame are replaced by the nearest sendable one. */
function sendableCloseCode(code: number): number {
  if (code === 1005) return 1000
  if (code === 1006 || code === 1015 || code < 1000 || code >= 5000 || code === 1004) return 1011
  return code
}

function closeWith(socket: WebSocket, code: number, reason: Buffer): void {
  if (socket.readyState === socket.OPEN) socket.close(sendableCloseCode(code), reason)
  else if (socket.readyState === socket.CONNECTING) socket.terminate()
}

function pipeSockets(client: WebSocket, upstream: WebSocket, tally: RealtimeUsageTally): void {
  const forward = (to: WebSocket) => (data: RawData, isBinary: boolean) => {
    if (to.readyState === to.OPEN) to.send(data, { binary: isBinary })
  }
  client.on('message', forward(upstream))
  upstream.on('message', forward(client))
  // Usage comes from the provider's frames only (its response.done events).
  upstream.on('message', (data: RawData, isBinary: boolean) => {
    if (!isBinary) tally.observe(data)
  })
  client.on('close', (code, reason) => closeWith(upstream, code, reason))
  upstream.on('close', (code, reason) => closeWith(client, code, reason))
  // An error is followed by 'close' on the same socket, which closes the other one.
  client.on('error', () => client.terminate())
  upstream.on('error', () => upstream.terminate())
  upstream.resume()
}

/** Opens the provider's socket for the target; resolves once it is open (paused, so no frame is lost). */
async function connectUpstream(target: RouteTarget, request: IncomingMessage, url: URL, protocols: readonly string[], socket: Duplex): Promise<WebSocket> {
  const { adapter, endpoint, record } = target.provider
  if (!adapter.passthrough) throw new GatewayError('unsupported_operation', `Provider '@${record.slug}' (${adapter.kind}) does not serve realtime`)

  const signable: SignableRequest = { method: 'GET', url: upstreamUrl(target, url.searchParams), headers: {}, body: undefined }
  for (const name of FORWARDED_HEADERS) {
    const value = header(request.headers, name)
    if (value !== undefined) signable.headers[name] = value
  }
  // The attempt span is active here (dispatch): the provider's handshake names it as parent; signed with the rest.
  injectTraceContext(signable.headers)
  await applyAuth(endpoint.auth, signable, endpoint.credentials, endpoint.options, endpoint)
  const upstreamProtocols = protocols.filter((protocol) => !protocol.startsWith(KEY_PROTOCOL_PREFIX))
  const upstream = new (ws().WebSocket)(signable.url, upstreamProtocols, { headers: signable.headers, perMessageDeflate: false, handshakeTimeout: endpoint.timeouts.connectMs, ...ssrfSocketOptions(signable.url, record.network === 'private-allowed') })

  return new Promise<WebSocket>((resolve, reject) => {
    const abandon = (): void => upstream.terminate()
    socket.once('close', abandon)
    upstream.once('unexpected-response', (_request, response) => {
      readBounded(response)
        .then((body) => reject(errorFromProvider(adapter.parseError(response.statusCode ?? 502, flatHeaders(response), body), record.slug, endpoint.credentials)))
        .catch(reject)
        .finally(() => upstream.terminate())
    })
    upstream.once('error', (error) => reject(error instanceof GatewayError ? error : new GatewayError('upstream_unavailable', 'The provider realtime endpoint could not be reached', { cause: error, headers: { 'retry-after': '1' } })))
    upstream.once('open', () => {
      socket.off('close', abandon)
      // Frames the provider sends before the caller's socket is ready wait in the socket.
      upstream.pause()
      resolve(upstream)
    })
  })
}

/** What the caller's handshake answer carries, decided once the provider's socket is open. */
interface Handshake {
  protocol: string | false
  headers: string[]
}

/** The provider's pick when the caller offered it; else the caller's first protocol other than the key one. */
function pickProtocol(offered: readonly string[], upstreamProtocol: string): string | false {
  if (upstreamProtocol !== '' && offered.includes(upstreamProtocol)) return upstreamProtocol
  return offered.find((protocol) => !protocol.startsWith(KEY_PROTOCOL_PREFIX)) ?? false
}

/** The upgrade's own I/O, beside the exchange: the raw socket and what the handshake needs. */
interface Upgrade {
  request: IncomingMessage
  socket: Duplex
  head: Buffer
  url: URL
  protocols: readonly string[]
}

export function registerRealtimeRoute(app: FastifyInstance, deps: PipelineDeps): void {
  const handshakes = new WeakMap<IncomingMessage, Handshake>()
  const upgrades = new WeakMap<Exchange, Upgrade>()
  let acceptor: WebSocketServer | null = null
  /** The server side of client sockets, made with the first session. */
  const server = (): WebSocketServer => {
    if (acceptor) return acceptor
    acceptor = new (ws().WebSocketServer)({
      noServer: true,
      perMessageDeflate: false,
      handleProtocols: (_offered, request) => handshakes.get(request)?.protocol ?? false,
    })
    acceptor.on('headers', (headers, request) => headers.push(...(handshakes.get(request)?.headers ?? [])))
    return acceptor
  }
  const live = new Set<WebSocket>()

  /** Session set-up through the pipeline: the session is the answer, open once both sockets are. */
  const spec: RouteSpec = {
    operation: { name: 'realtime', endpointType: 'realtime', format: 'openai', textual: false, cacheable: false },
    model: (exchange) => upgrades.get(exchange)?.url.searchParams.get('model') ?? undefined,
    presentedKey: (_headers, exchange) => keyFromProtocols(upgrades.get(exchange)?.protocols ?? []),
    async attempt(exchange, target, _body, _signal): Promise<SessionAnswer> {
      const { request, socket, head, url, protocols } = upgrades.get(exchange)!
      const upstream = await connectUpstream(target.route, request, url, protocols, socket)
      if (!socket.writable) {
        upstream.terminate()
        throw new GatewayError('request_cancelled', 'The client left before the realtime session opened')
      }
      handshakes.set(request, {
        protocol: pickProtocol(protocols, upstream.protocol),
        headers: [`x-gateway-trace-id: ${exchange.context.trace.traceId}`, ...Object.entries(exchange.responseHeaders).map(([name, value]) => `${name}: ${value}`)],
      })
      const tally = new RealtimeUsageTally()
      const ended = new Promise<void>((resolve) => {
        server().handleUpgrade(request, socket, head, (client) => {
          live.add(client)
          live.add(upstream)
          client.once('close', () => {
            live.delete(client)
            live.delete(upstream)
            resolve()
          })
          pipeSockets(client, upstream, tally)
        })
      })
      return { kind: 'session', status: 101, ended, usage: () => tally.usage() }
    },
  }
  const pipeline = buildRoutePipeline(spec, deps)

  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    let trace: ReturnType<typeof readTrace>
    try {
      trace = readTrace(request.headers)
    } catch (error) {
      refuse(socket, error, randomTraceId())
      return
    }
    const url = new URL(request.url ?? '/', 'http://gateway.invalid')
    if (url.pathname !== REALTIME_PATH) {
      // Other upgrade listeners may serve other paths; with none, nobody else will answer.
      if (app.server.listenerCount('upgrade') === 1) refuse(socket, new GatewayError('route_not_found', `No WebSocket route at ${url.pathname}`), trace.traceId)
      return
    }
    const runtime = deps.holder.current
    if (!runtime) {
      refuse(socket, notReady(), trace.traceId)
      return
    }
    try {
      refuseRepeatedCredentials(request.rawHeaders)
    } catch (error) {
      refuse(socket, error, trace.traceId)
      return
    }
    const controller = new AbortController()
    socket.once('close', () => controller.abort())
    const exchange: Exchange = {
      operation: spec.operation,
      context: new ExchangeContext(trace, runtime, controller.signal, deps.now()),
      headers: request.headers,
      url: request.url ?? '/',
      params: {},
      rawBody: null,
      body: null,
      upload: null,
      relayStreams: pipeline.relayStreams,
      route: null,
      facts: newFacts(),
      responseHeaders: {},
    }
    upgrades.set(exchange, { request, socket, head, url, protocols: offeredProtocols(request) })
    pipeline.run(exchange).then(
      (answer) => {
        exchange.facts.status = answer.status
      },
      (error: unknown) => refuse(socket, error, trace.traceId, exchange.responseHeaders),
    )
  })

  // Without `Upgrade: websocket` the request lands here rather than on the upgrade listener.
  app.get(REALTIME_PATH, async () => {
    throw new GatewayError('invalid_header', `${REALTIME_PATH} is a WebSocket endpoint: send the request with 'Upgrade: websocket'`, { param: 'upgrade' })
  })

  app.addHook('onClose', async () => {
    for (const socket of live) socket.terminate()
    acceptor?.close()
  })
}
