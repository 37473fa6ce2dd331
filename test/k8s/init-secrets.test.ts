/**
 * `gatehouse init-secrets` against a real kube-apiserver: the first run creates the Secrets, a
 * second changes nothing (the pepper must never change), and a key removed by hand is added back
 * alone.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { CoreV1Api } from '@kubernetes/client-node'
import { parseApiKey } from '@gatehouse/gateway/snapshot'
import { runInitSecrets } from '../../operator/src/cli/commands/init-secrets.ts'
import { SECRETS } from '../../operator/src/kube/client.ts'
import { HttpKubeClient } from '../../operator/src/kube/http-client.ts'
import { requireTools } from './apiserver.ts'
import { sharedApiServer } from './shared.ts'

const tools = requireTools(['etcd', 'kube-apiserver'])
/** Its own namespace on the shared API server. */
const NAMESPACE = 'gatehouse-init-secrets'

describe.skipIf(!tools.available)('gatehouse init-secrets', () => {
  let client: HttpKubeClient
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    const server = sharedApiServer()
    env = { KUBECONFIG: server.kubeconfigPath, POD_NAMESPACE: NAMESPACE }
    client = new HttpKubeClient(server.kubeConfig)
    await server.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } })
  }, 120_000)

  async function run(): Promise<string> {
    let out = ''
    const status = await runInitSecrets(['--secret', 'gh-secrets', '--postgresql-secret', 'gh-postgresql', '--postgresql-host', 'gh-postgresql', '--redis-secret', 'gh-redis', '--redis-host', 'gh-redis'], {
      stdout: (text) => { out += text }, stderr: () => {}, env,
    }, client)
    expect(status).toBe(0)
    return out
  }

  async function data(name: string): Promise<Record<string, string>> {
    const secret = (await client.get(SECRETS, NAMESPACE, name)) as unknown as { data: Record<string, string> }
    return Object.fromEntries(Object.entries(secret.data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]))
  }

  it('creates the Secrets once and keeps them on later runs', async () => {
    expect(await run()).toBe(`secret ${NAMESPACE}/gh-secrets: wrote key-pepper, encryption-key, gateway-token, admin-api-key\nsecret ${NAMESPACE}/gh-postgresql: wrote password, url\nsecret ${NAMESPACE}/gh-redis: wrote url, admin-url, admin-password\n`)
    const first = await data('gh-secrets')
    expect(parseApiKey(first['admin-api-key']!)?.type).toBe('admin')
    expect(first['key-pepper']!.length).toBeGreaterThanOrEqual(32)
    const postgres = await data('gh-postgresql')
    expect(postgres.url).toBe(`postgres://gatehouse:${postgres.password}@gh-postgresql:5432/gatehouse`)
    // The bundled Redis: the gateways' ACL user in their URL, the admin's password in the admin URL.
    const redis = await data('gh-redis')
    expect(redis['admin-url']).toBe(`redis://:${redis['admin-password']}@gh-redis:6379/0`)
    expect(redis.url).toMatch(/^redis:\/\/gatehouse-gateway:[0-9a-f]{48}@gh-redis:6379\/0$/)
    expect(redis.url).not.toContain(redis['admin-password']!)

    expect(await run()).toBe(`secret ${NAMESPACE}/gh-secrets: kept as it is\nsecret ${NAMESPACE}/gh-postgresql: kept as it is\nsecret ${NAMESPACE}/gh-redis: kept as it is\n`)
    expect(await data('gh-secrets')).toEqual(first)
  })

  it('adds back only a key that went missing', async () => {
    const before = await data('gh-secrets')
    await client.mergePatch(SECRETS, NAMESPACE, 'gh-secrets', { data: { 'gateway-token': null } })
    expect(await run()).toContain(`secret ${NAMESPACE}/gh-secrets: wrote gateway-token\n`)
    const after = await data('gh-secrets')
    expect(after['key-pepper']).toBe(before['key-pepper'])
    expect(after['gateway-token']).not.toBe(before['gateway-token'])
  })
})
