/**
 * Self-managed webhook certificates against an in-memory API (Secret and webhook configuration,
 * with resourceVersion conflicts as the API server has them): created once and shared by replicas,
 * renewed with a third of the validity left, a renewed CA added in front of the old one, and
 * caBundle written into every webhook and repaired when it drifts.
 */
import { X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { KubeApiError, type KubeRest } from '../kube/client.ts'
import { DAYS } from './certificates.ts'
import { selfManagedCertificates } from './cert-rotation.ts'

const SECRET = '/api/v1/namespaces/gh/secrets/gatehouse-webhook-tls'
const CONFIG = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/injector'

function fakeApi() {
  let secret: { metadata: Record<string, unknown>; data: Record<string, string> } | null = null
  let version = 0
  const config = { webhooks: [{ name: 'a', clientConfig: { caBundle: '' } }, { name: 'b', clientConfig: {} as { caBundle?: string } }] }
  const api: KubeRest = {
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      if (path === CONFIG && method === 'GET') return structuredClone(config) as T
      if (path === CONFIG && method === 'PATCH') {
        for (const change of (body as typeof config).webhooks) config.webhooks.find((w) => w.name === change.name)!.clientConfig.caBundle = change.clientConfig.caBundle
        return {} as T
      }
      if (method === 'GET' && path === SECRET) {
        if (!secret) throw new KubeApiError(404, 'NotFound', 'not found')
        return structuredClone(secret) as T
      }
      const sent = body as { metadata: { resourceVersion?: string }; data: Record<string, string> }
      if (method === 'POST') {
        if (secret) throw new KubeApiError(409, 'AlreadyExists', 'exists')
      } else if (sent.metadata.resourceVersion !== String(version)) {
        throw new KubeApiError(409, 'Conflict', 'stale')
      }
      version += 1
      secret = { metadata: { ...sent.metadata, resourceVersion: String(version) }, data: sent.data }
      return structuredClone(secret) as T
    },
  }
  return { api, config, secret: () => secret }
}

const names = ['gatehouse-webhook.gh.svc', '127.0.0.1']

describe('selfManagedCertificates', () => {
  it('creates the Secret once, shares it between replicas and writes caBundle into every webhook', async () => {
    const { api, config, secret } = fakeApi()
    const first = selfManagedCertificates({ kube: api, namespace: 'gh', secretName: 'gatehouse-webhook-tls', webhookConfigName: 'injector', names })
    const second = selfManagedCertificates({ kube: api, namespace: 'gh', secretName: 'gatehouse-webhook-tls', webhookConfigName: 'injector', names })
    await Promise.all([first.check(), second.check()])
    await Promise.all([first.check(), second.check()])
    expect(first.current().certificate).toBe(second.current().certificate)
    const bundle = secret()!.data['ca.crt']!
    expect(config.webhooks.map((w) => w.clientConfig.caBundle)).toEqual([bundle, bundle])
    const leaf = new X509Certificate(first.current().certificate)
    expect(leaf.checkHost('gatehouse-webhook.gh.svc')).toBeTruthy()
    expect(leaf.verify(new X509Certificate(Buffer.from(bundle, 'base64')).publicKey)).toBe(true)

    // Drift (someone cleared it): the next check writes it back.
    config.webhooks[1]!.clientConfig.caBundle = ''
    await first.check()
    expect(config.webhooks[1]!.clientConfig.caBundle).toBe(bundle)
  })

  it('renews the serving certificate with a third of its validity left, and a renewed CA joins the bundle', async () => {
    const { api, config } = fakeApi()
    let now = new Date('2030-01-01T00:00:00Z')
    const renewed: string[] = []
    const source = selfManagedCertificates({
      kube: api, namespace: 'gh', secretName: 'gatehouse-webhook-tls', webhookConfigName: 'injector', names,
      caValidityMs: DAYS(300), servingValidityMs: DAYS(90), now: () => now, checkIntervalMs: 3_600_000,
    })
    await source.start((certificate) => renewed.push(certificate.certificate))
    source.stop()
    const initial = source.current().certificate
    const initialBundle = config.webhooks[0]!.clientConfig.caBundle

    now = new Date(now.getTime() + DAYS(50))
    await source.check()
    expect(source.current().certificate).toBe(initial)
    now = new Date(now.getTime() + DAYS(15))
    await source.check()
    expect(source.current().certificate).not.toBe(initial)
    expect(renewed).toEqual([source.current().certificate])
    expect(config.webhooks[0]!.clientConfig.caBundle).toBe(initialBundle)

    // The CA reaches its last third: a new CA signs, the old one stays trusted until it expires.
    now = new Date(now.getTime() + DAYS(150))
    await source.check()
    const bundle = Buffer.from(config.webhooks[0]!.clientConfig.caBundle!, 'base64').toString()
    expect(bundle.match(/BEGIN CERTIFICATE/g)).toHaveLength(2)
    expect(bundle).toContain(Buffer.from(initialBundle!, 'base64').toString().trim())
  })
})
