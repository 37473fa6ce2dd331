/**
 * express ships no types of its own and `@types/express` is not a dependency: the little of it the
 * agent tests use to mount the official A2A SDK's express handlers (`@a2a-js/sdk/server/express`,
 * whose declarations name express's `RequestHandler`).
 */
declare module 'express' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface Request extends IncomingMessage {
    body?: unknown
  }
  export interface Response extends ServerResponse {
    status(code: number): Response
  }
  export type NextFunction = (error?: unknown) => void
  export type RequestHandler = (request: Request, response: Response, next: NextFunction) => void

  /** An app is also a node:http request listener. */
  export interface Express {
    (request: IncomingMessage, response: ServerResponse): void
    use(...handlers: Array<string | RequestHandler>): Express
  }

  interface ExpressFactory {
    (): Express
    json(): RequestHandler
  }

  const express: ExpressFactory
  export default express
}
