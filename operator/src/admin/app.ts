/**
 * The admin API as a Fastify 5 instance (never listening itself: the embedded process and the
 * control-plane process mount or serve it).
 *
 *   buildAdminApp({ store, pepper, logger?, jwt?: { jwksUrl, issuer, audience }, clock?, routeModules? })
 *
 * Every route is authenticated: `x-gateway-api-key: <key>` or `Authorization: Bearer <key or JWT>`.
 * What a credential may do is decided per route by identity/capabilities.ts and identity/api-keys.ts.
 * Errors use the envelope {"error":{"message","type","param","code"}} with AB codes. Every
 * mutating request, and every JWT failure, is written to the audit log.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify'
import { ADMIN_UNROUTED_HEADER } from '@gatehouse/gateway/snapshot'
import { type Clock, systemClock } from '../clock.ts'
import { AdminError } from '../errors.ts'
import { authenticate, credentialKind, extractCredential, type AuthenticatorDeps } from '../identity/authenticate.ts'
import { assertPepper, ensureOrganization } from '../identity/bootstrap.ts'
import { JwtVerifier, type JwtOptions } from '../identity/jwt.ts'
import type { SsoSettings } from '../sso/config.ts'
import { OidcRelyingParty } from '../sso/oidc-client.ts'
import type { Store } from '../store/index.ts'
import { isStoreOutage } from '../store/errors.ts'
import { isMutating, recordAuthFailure, recordRequest, redact } from './audit.ts'
import type { AdminContext } from './context.ts'
import type { LimitCounters } from './context.ts'
import { adminRouteModules, type AdminRouteModule } from './routes/index.ts'
import { unstorableTextError } from './storable-text.ts'
import { registerServerSpans } from '../telemetry/spans.ts'

export interface AdminAppDeps {
  store: Store
  /** HMAC pepper for API keys (GATEHOUSE_KEY_PEPPER), at least 32 characters. */
  pepper: string
  logger?: FastifyBaseLogger
  jwt?: JwtOptions
  /** Use a prepared verifier (tests, or sharing one JWKS cache with the gateway). */
  jwtVerifier?: JwtVerifier
  clock?: Clock
  routeModules?: readonly AdminRouteModule[]
  /** The gateways' budget counters (Redis, or the embedded gateway's limiter), for current usage. */
  limitCounters?: LimitCounters
  /** OIDC sign-in settings (GATEHOUSE_SSO_*); absent: /v1/auth/sso answers 404. */
  sso?: SsoSettings
  /** Told of every answered request (the process's Prometheus metrics); `route` is the template. */
  observeRequest?: (route: string, method: string, status: number, seconds: number) => void
}

const BODY_LIMIT_BYTES = 1024 * 1024

function toAdminError(error: unknown): AdminError {
  if (error instanceof AdminError) return error
  // Also a raw driver or socket error that escaped the store's wrapping: an outage is never a 500.
  if (isStoreOutage(error)) {
    return new AdminError('dependency_unavailable', 'the admin store is unavailable; retry shortly', { headers: { 'retry-after': '2' } })
  }
  const fastifyError = error as Partial<FastifyError> & { code?: string }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    // Malformed JSON, wrong content type, body too large: the client's mistake, said plainly.
    return new AdminError('AB01', fastifyError.message ?? 'invalid request', { param: '(body)', status: fastifyError.statusCode })
  }
  const pgCode = fastifyError.code
  if (pgCode === '23505') return new AdminError('AB07', 'a resource with the same unique value already exists')
  if (pgCode === '23514' || pgCode === '22001') return new AdminError('AB01', 'a value is outside its allowed range', { param: '(body)' })
  if (pgCode === '23503') return new AdminError('AB01', 'a referenced resource does not exist', { param: '(body)' })
  return new AdminError('AB04', 'internal error')
}

/**
 * What of an unexpected error may reach the log: its kind, code and redacted message. Database
 * errors carry `detail`/`parameters` that can quote stored values (a key hash in a unique
 * violation), so those fields are never logged.
 */
function loggableError(error: unknown): Record<string, unknown> {
  const e = error as { name?: unknown; code?: unknown; message?: unknown; stack?: unknown; cause?: unknown }
  const cause = e.cause as { name?: unknown; code?: unknown; message?: unknown } | undefined
  return {
    type: typeof e.name === 'string' ? e.name : 'Error',
    code: typeof e.code === 'string' ? e.code : undefined,
    message: redact(typeof e.message === 'string' ? e.message : String(error)),
    stack: typeof e.stack === 'string' ? redact(e.stack) : undefined,
    cause: cause ? { type: cause.name, code: cause.code, message: redact(String(cause.message)) } : undefined,
  }
}

export function buildAdminApp(deps: AdminAppDeps): FastifyInstance {
  assertPepper(deps.pepper)
  const clock = deps.clock ?? systemClock
  const jwt = deps.jwtVerifier ?? (deps.jwt ? new JwtVerifier(deps.jwt, clock) : null)
  let organizationId: Promise<string> | null = null
  const ctx: AdminContext = {
    store: deps.store,
    pepper: deps.pepper,
    clock,
    jwt,
    ...(deps.limitCounters ? { limitCounters: deps.limitCounters } : {}),
    ...(deps.sso ? { sso: new OidcRelyingParty(deps.sso, clock) } : {}),
    organizationId: () => {
      organizationId ??= ensureOrganization(deps.store).then((org) => org.id).catch((error: unknown) => {
        organizationId = null
        throw error
      })
      return organizationId
    },
  }
  const authDeps: AuthenticatorDeps = { store: deps.store, pepper: deps.pepper, clock, jwt, organizationId: ctx.organizationId }

  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
  })
  // First hook: with tracing on, every admin request is a server span (operator/src/telemetry/spans.ts).
  registerServerSpans(app)
  if (deps.observeRequest) observeRequests(app, deps.observeRequest)
  app.decorateRequest('principal', null)
  app.decorateRequest('auditTarget', null)
  app.decorateRequest('authFailure', null)

  app.addHook('onRequest', async (request) => {
    // Routes with their own authentication (the gateway snapshot stream) opt out of the admin one.
    if ((request.routeOptions.config as { publicRoute?: boolean } | undefined)?.publicRoute) return
    const credentials = { apiKeyHeader: request.headers['x-gateway-api-key'], authorization: request.headers.authorization }
    try {
      request.principal = await authenticate(authDeps, credentials)
    } catch (error) {
      const failure = toAdminError(error)
      let credential: string | null = null
      try {
        credential = extractCredential(credentials)
      } catch {
        // Ambiguous credentials: recorded as 'none'.
      }
      request.authFailure = { mechanism: credential ? credentialKind(credential) : 'none', reason: failure.message }
      throw failure
    }
  })

  // One check for every route: text PostgreSQL cannot store is the client's 400, not a database 500.
  app.addHook('preValidation', async (request) => {
    const error = unstorableTextError(request)
    if (error) throw error
  })

  app.addHook('onSend', async (request, reply, payload) => {
    try {
      if (request.principal && isMutating(request.method)) {
        await recordRequest(deps.store, request.principal.organizationId, request, reply)
      } else if (request.authFailure && (request.authFailure.mechanism === 'jwt' || request.authFailure.mechanism === 'session' || isMutating(request.method))) {
        // Every JWT or session failure, and every refused attempt at a write, leaves a trace.
        await recordAuthFailure(deps.store, await ctx.organizationId(), request, request.authFailure.mechanism, request.authFailure.reason, reply.statusCode)
      }
    } catch (error) {
      request.log.error({ err: loggableError(error) }, 'audit write failed')
    }
    reply.header('x-request-id', request.id)
    return payload
  })

  if (jwt) {
    // Background JWKS refresh for as long as the app lives.
    const stopJwksRefresh = jwt.jwks.start()
    app.addHook('onClose', async () => stopJwksRefresh())
  }

  app.setErrorHandler((error, request, reply) => {
    const adminError = toAdminError(error)
    if (adminError.status >= 500) request.log.error({ err: loggableError(error) }, 'admin request failed')
    void reply.status(adminError.status).headers(adminError.headers).send(adminError.toBody())
  })
  app.setNotFoundHandler((request, reply) => {
    const error = new AdminError('AB08', `no admin route ${request.method} ${request.url.split('?')[0]}`)
    // Tells a gateway forwarding here that neither plane has the route, so it answers in its own words.
    void reply.status(error.status).header(ADMIN_UNROUTED_HEADER, '1').send(error.toBody())
  })

  for (const module of deps.routeModules ?? adminRouteModules) {
    for (const prefix of module.prefixes) {
      void app.register(async (scope) => module.register(scope, ctx), { prefix })
    }
  }
  return app
}

/** Times every request from its start to its response, by route template (never the raw URL). */
function observeRequests(app: FastifyInstance, observe: NonNullable<AdminAppDeps['observeRequest']>): void {
  app.addHook('onResponse', (request, reply, done) => {
    observe(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}
