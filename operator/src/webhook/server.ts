/**
 * The webhook's HTTPS listener: POST /mutate-pods with an AdmissionReview, answered with an
 * AdmissionReview of the same version. The certificate comes from a CertificateSource and is
 * swapped in place when it is renewed (no restart, connections in flight keep theirs).
 *
 * It also serves the sidecars' routes (stream, ACKs, usage; SIDECAR_ROUTES_PREFIX) over the same
 * TLS, handed to the control plane's app: sidecars reach the control plane through the webhook
 * Service and verify it with the CA the webhook writes into their env.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { admit, AdmissionUnavailable, type AdmissionDeps } from './admission.ts'
import type { CertificateSource } from './cert-rotation.ts'

export const MUTATE_PATH = '/mutate-pods'
/** The sidecar routes (gateway/src/snapshot/sync-protocol.ts: SIDECAR_*_PATH). */
export const SIDECAR_ROUTES_PREFIX = '/v1/gateway-sync/sidecar/'
const MAX_BODY_BYTES = 4 * 1024 * 1024

export interface WebhookLogger {
  info(object: object, message: string): void
  warn(object: object, message: string): void
}

export interface WebhookServer {
  url: string
  close(): Promise<void>
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new Error('admission review too large')
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export interface WebhookServerOptions {
  host: string
  port: number
  certificates: CertificateSource
  deps: AdmissionDeps
  logger: WebhookLogger
  /** Serves the sidecar routes (the control plane app's `routing`); without it they are 404. */
  sidecarRoutes?: (request: IncomingMessage, response: ServerResponse) => void
}

export async function serveWebhook(options: WebhookServerOptions): Promise<WebhookServer> {
  const { certificates, deps, logger } = options
  let server: Server | null = null
  await certificates.start((certificate) => {
    server?.setSecureContext({ cert: certificate.certificate, key: certificate.key })
    logger.info({}, 'webhook serving certificate renewed')
  })
  const initial = certificates.current()
  server = createServer({ cert: initial.certificate, key: initial.key }, (request, response) => {
    const answer = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(body))
    }
    const path = request.url?.split('?')[0] ?? ''
    if (options.sidecarRoutes && path.startsWith(SIDECAR_ROUTES_PREFIX)) return options.sidecarRoutes(request, response)
    if (request.method !== 'POST' || path !== MUTATE_PATH) return answer(404, { message: 'not found' })
    void (async () => {
      let review: { apiVersion?: string; kind?: string; request?: Parameters<typeof admit>[0] }
      try {
        review = JSON.parse(await readBody(request)) as typeof review
      } catch {
        return answer(400, { message: 'the body must be an AdmissionReview' })
      }
      if (!review.request?.uid) return answer(400, { message: 'the AdmissionReview has no request.uid' })
      try {
        const response = await admit(review.request, deps)
        if (!response.allowed) logger.info({ namespace: review.request.namespace, reason: response.status?.message }, 'pod refused')
        else if (response.patch) logger.info({ namespace: review.request.namespace }, 'sidecar injected')
        answer(200, { apiVersion: review.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', response })
      } catch (error) {
        // A dependency failed: let failurePolicy decide (the API server sees a failed call).
        logger.warn({ err: error instanceof AdmissionUnavailable ? error.message : error }, 'admission failed')
        answer(503, { message: 'the webhook could not decide; try again' })
      }
    })()
  })
  await new Promise<void>((resolve, reject) => {
    server!.once('error', reject)
    server!.listen(options.port, options.host, () => resolve())
  })
  const { address, port } = server.address() as AddressInfo
  return {
    url: `https://${address.includes(':') ? `[${address}]` : address}:${port}`,
    async close() {
      certificates.stop()
      await new Promise<void>((resolve) => server!.close(() => resolve()))
    },
  }
}
