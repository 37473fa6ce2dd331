/**
 * `gatehouse init-secrets`: creates the Secrets a cluster install needs, once, at run time (the
 * chart runs it as the operator's init container). Values generated in a Helm template change on
 * every `helm template` (Argo CD, Flux): a new key pepper would invalidate every API key. Here a
 * Secret that exists is kept; only keys missing from it are added.
 *
 *   --secret NAME --pepper-key K --encryption-key-key K --gateway-token-key K --admin-key-key K
 *   [--postgresql-secret NAME --postgresql-url-key K --postgresql-host H --postgresql-user U --postgresql-database D]
 *   [--redis-secret NAME --redis-url-key K --redis-host H --redis-user U]   the bundled Redis: the
 *     gateways' URL (their ACL user, see `redis-acl`), `admin-url` and `admin-password`
 * Namespace: POD_NAMESPACE (else `default`).
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { generateEncryptionKey } from '../../crypto/envelope.ts'
import { KubeApiError, SECRETS } from '../../kube/client.ts'
import { HttpKubeClient, loadKubeConfig } from '../../kube/http-client.ts'
import { CliError } from './admin-client.ts'
import type { CommandIo } from './io.ts'

/** The part of the Kubernetes client this command uses (tests pass the real one against a test API server). */
export type SecretClient = Pick<HttpKubeClient, 'get' | 'create' | 'mergePatch'>

const token = (): string => randomBytes(32).toString('base64url')

/** Creates `name` with `wanted`'s values, or adds to it the keys it lacks; returns the keys written. */
export async function ensureSecret(client: SecretClient, namespace: string, name: string, wanted: Record<string, () => string>): Promise<string[]> {
  const existing = await client.get(SECRETS, namespace, name)
  if (existing === null) {
    const data = Object.fromEntries(Object.entries(wanted).map(([key, make]) => [key, Buffer.from(make()).toString('base64')]))
    try {
      await client.create(SECRETS, namespace, {
        apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
        metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'gatehouse' } },
        data,
      })
      return Object.keys(data)
    } catch (error) {
      // Another replica's init container won the race: use what it wrote.
      if (!(error instanceof KubeApiError && error.statusCode === 409)) throw error
      return ensureSecret(client, namespace, name, wanted)
    }
  }
  const present = (existing as { data?: Record<string, string> }).data ?? {}
  const missing = Object.entries(wanted).filter(([key]) => present[key] === undefined)
  if (missing.length === 0) return []
  await client.mergePatch(SECRETS, namespace, name, { data: Object.fromEntries(missing.map(([key, make]) => [key, Buffer.from(make()).toString('base64')])) })
  return missing.map(([key]) => key)
}

export async function runInitSecrets(argv: string[], io: CommandIo, client?: SecretClient): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      secret: { type: 'string' },
      'pepper-key': { type: 'string', default: 'key-pepper' },
      'encryption-key-key': { type: 'string', default: 'encryption-key' },
      'gateway-token-key': { type: 'string', default: 'gateway-token' },
      'admin-key-key': { type: 'string', default: 'admin-api-key' },
      'postgresql-secret': { type: 'string' },
      'postgresql-url-key': { type: 'string', default: 'url' },
      'postgresql-host': { type: 'string' },
      'postgresql-user': { type: 'string', default: 'gatehouse' },
      'postgresql-database': { type: 'string', default: 'gatehouse' },
      'redis-secret': { type: 'string' },
      'redis-url-key': { type: 'string', default: 'url' },
      'redis-host': { type: 'string' },
      'redis-user': { type: 'string', default: 'gatehouse-gateway' },
    },
    strict: true,
  })
  // The chart leaves --secret out when the shared secrets are the user's own (secrets.existingSecret)
  // and only a bundled database's Secret is generated.
  if (!values.secret && !values['postgresql-secret'] && !values['redis-secret']) throw new CliError('init-secrets needs --secret NAME', 2)
  const namespace = io.env.POD_NAMESPACE || 'default'
  const kube = client ?? new HttpKubeClient(loadKubeConfig(io.env))
  if (values.secret) {
    const written = await ensureSecret(kube, namespace, values.secret, {
      [values['pepper-key']]: token,
      [values['encryption-key-key']]: generateEncryptionKey,
      [values['gateway-token-key']]: token,
      [values['admin-key-key']]: () => generateApiKey('admin'),
    })
    io.stdout(`secret ${namespace}/${values.secret}: ${written.length === 0 ? 'kept as it is' : `wrote ${written.join(', ')}`}\n`)
  }
  if (values['postgresql-secret']) {
    if (!values['postgresql-host']) throw new CliError('--postgresql-secret needs --postgresql-host', 2)
    // One password for both keys: generated once, the URL is built from it.
    const password = randomBytes(24).toString('hex')
    const url = `postgres://${values['postgresql-user']}:${password}@${values['postgresql-host']}:5432/${values['postgresql-database']}`
    const pg = await ensureSecret(kube, namespace, values['postgresql-secret'], { password: () => password, [values['postgresql-url-key']]: () => url })
    if (pg.length === 1) throw new CliError(`secret ${namespace}/${values['postgresql-secret']} has only one of password and ${values['postgresql-url-key']}; set both or delete it`)
    io.stdout(`secret ${namespace}/${values['postgresql-secret']}: ${pg.length === 0 ? 'kept as it is' : `wrote ${pg.join(', ')}`}\n`)
  }
  if (values['redis-secret']) {
    if (!values['redis-host']) throw new CliError('--redis-secret needs --redis-host', 2)
    // Generated once; the URLs are built from the passwords (hex: nothing to escape in a URL).
    const adminPassword = randomBytes(24).toString('hex')
    const gatewayPassword = randomBytes(24).toString('hex')
    const base = `${values['redis-host']}:6379/0`
    const keys = {
      [values['redis-url-key']]: () => `redis://${encodeURIComponent(values['redis-user'])}:${gatewayPassword}@${base}`,
      'admin-url': () => `redis://:${adminPassword}@${base}`,
      'admin-password': () => adminPassword,
    }
    const redis = await ensureSecret(kube, namespace, values['redis-secret'], keys)
    if (redis.length > 0 && redis.length < Object.keys(keys).length) throw new CliError(`secret ${namespace}/${values['redis-secret']} has only some of ${Object.keys(keys).join(', ')}; set all or delete it`)
    io.stdout(`secret ${namespace}/${values['redis-secret']}: ${redis.length === 0 ? 'kept as it is' : `wrote ${redis.join(', ')}`}\n`)
  }
  return 0
}
