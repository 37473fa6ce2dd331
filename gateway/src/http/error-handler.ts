/**
 * Renders every error as the OpenAI envelope. Fastify's own errors (bad JSON, too large, wrong
 * media type) are mapped onto the catalog so clients see one shape everywhere.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError, toGatewayError } from '../core/errors.ts'
import { scrubSecrets } from '../core/scrub.ts'

/** An error as a log line may carry it: message and stack scrubbed of anything shaped like a key. */
function loggable(error: unknown): unknown {
  if (!(error instanceof Error)) return typeof error === 'string' ? scrubSecrets(error) : error
  return { type: error.name, message: scrubSecrets(error.message), stack: error.stack === undefined ? undefined : scrubSecrets(error.stack) }
}

function fromFastify(error: FastifyError): GatewayError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_json', 'The request body is not valid JSON', { cause: error })
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', 'The request body is too large', { cause: error })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', 'Send the request body as application/json', { cause: error })
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_json', 'The request body length does not match Content-Length', { cause: error })
    default:
      if (error instanceof SyntaxError || error.statusCode === 400) return new GatewayError('invalid_json', 'The request body is not valid JSON', { cause: error })
      return null
  }
}

/** `toBody` renders the error in another API's shape (the Anthropic Messages route); the OpenAI envelope by default. */
export function renderError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  toBody: (error: GatewayError) => unknown = (gatewayError) => gatewayError.toBody(),
): FastifyReply {
  const gatewayError = error instanceof GatewayError ? error : (fromFastify(error as FastifyError) ?? toGatewayError(error))
  // Provider messages are scrubbed where they are made (provider-errors.ts, with the provider's own
  // secrets); this pass catches key-shaped text in any message before it is sent or logged.
  gatewayError.message = scrubSecrets(gatewayError.message)
  if (gatewayError.code === 'internal_error') {
    // The cause may hold upstream detail; it is logged (scrubbed), never sent.
    request.log.error({ err: loggable(gatewayError.cause ?? gatewayError), code: gatewayError.code }, gatewayError.message)
  } else if (gatewayError.status >= 500 || gatewayError.logDetail !== undefined) {
    // Expected trouble (a provider down, not ready yet): one line, no stack; a provider that could
    // not be reached says which, where and why (`logDetail`, pipeline/stages/dispatch.ts).
    request.log.warn({ code: gatewayError.code, status: gatewayError.status, ...gatewayError.logDetail }, gatewayError.message)
  }
  return reply.code(gatewayError.status).headers(gatewayError.headers).send(toBody(gatewayError))
}
