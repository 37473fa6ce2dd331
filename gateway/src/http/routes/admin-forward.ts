/**
 * One base URL serves both planes: every /v1 path the gateway does not answer itself goes to the
 * control plane (in-process when embedded, over HTTP in cluster mode). Bodies are forwarded as raw
 * bytes, untouched, in a plugin scope with its own content-type parser.
 */
import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../../core/errors.ts'

export interface ForwardedRequest {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
  body: Buffer | undefined
  remoteAddress: string | undefined
}

export interface ForwardedResponse {
  status: number
  headers: Record<string, string | string[] | number | undefined>
  body: Buffer | string
}

export type AdminForwarder = (request: ForwardedRequest) => Promise<ForwardedResponse>

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection'])

function withoutContentType(headers: ForwardedRequest['headers']): ForwardedRequest['headers'] {
  const { 'content-type': _type, 'content-length': _length, ...rest } = headers
  return rest
}

export function registerAdminForward(app: FastifyInstance, forward: AdminForwarder | undefined): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
    scope.all('/v1/*', async (request, reply) => {
      if (!forward) throw new GatewayError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`)
      const body = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined
      // A DELETE sent with `content-type: application/json` and no body is common client
      // behaviour; without a body the header means nothing and would make the target refuse it.
      const headers = body === undefined ? withoutContentType(request.headers) : request.headers
      const answer = await forward({ method: request.method, url: request.url, headers, body, remoteAddress: request.ip })
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) reply.header(name, value)
      }
      return reply.code(answer.status).send(answer.body)
    })
  })
}
