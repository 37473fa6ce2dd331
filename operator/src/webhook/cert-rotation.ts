/**
 * Where the webhook's serving certificate comes from, and how it stays current.
 *
 * Self-managed (the default): a Secret in the operator's namespace is the source of truth (CA key,
 * CA bundle, serving key and certificate), so every replica serves the same certificate. Any
 * replica creates it when missing and renews it when it nears expiry (writes are guarded by
 * resourceVersion: a replica that loses the race adopts the winner's). A renewed CA is added to the
 * bundle in front of the old one, which stays until it expires, so the API server trusts both
 * certificates while replicas switch over. The bundle is written into `caBundle` of every webhook
 * in the MutatingWebhookConfiguration, at start and on every check (which also repairs drift).
 *
 * From files (cert-manager): tls.crt and tls.key in a mounted directory, re-read on every check;
 * cert-manager's CA injector keeps `caBundle` current.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { X509Certificate } from 'node:crypto'
import { isStatus, type KubeRest } from '../kube/client.ts'
import { DAYS, issueCa, issueServingCertificate, remainingValidityMs, servesNames, type KeyAndCertificate } from './certificates.ts'

export interface CertificateSource {
  /** The serving certificate now (after start()). */
  current(): KeyAndCertificate
  /** The CA bundle clients verify it with (PEM), when known: sidecars get it to verify the control plane. */
  caBundle(): string | null
  /** Loads or creates the certificate, then checks every `checkIntervalMs`; `onChange` after a renewal. */
  start(onChange: (certificate: KeyAndCertificate) => void): Promise<void>
  /** One check now (tests, and the timer). */
  check(): Promise<void>
  stop(): void
}

export interface SelfManagedOptions {
  kube: KubeRest
  namespace: string
  secretName: string
  /** The MutatingWebhookConfiguration whose webhooks get the CA bundle; null: leave it alone. */
  webhookConfigName: string | null
  /** DNS names and IPs the serving certificate must be valid for. */
  names: readonly string[]
  caValidityMs?: number
  servingValidityMs?: number
  checkIntervalMs?: number
  now?: () => Date
  onError?: (error: unknown) => void
}

interface Bundle {
  caBundle: string
  caKey: string
  serving: KeyAndCertificate
}

interface SecretObject {
  metadata: { name: string; namespace: string; resourceVersion?: string }
  type?: string
  data?: Record<string, string>
}

const b64 = (text: string): string => Buffer.from(text).toString('base64')
const unb64 = (text: string | undefined): string => Buffer.from(text ?? '', 'base64').toString('utf8')

function pemBlocks(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map((block) => block.trim() + '\n') ?? []
}

export function selfManagedCertificates(options: SelfManagedOptions): CertificateSource {
  const { kube, namespace, secretName } = options
  const now = options.now ?? (() => new Date())
  const caValidityMs = options.caValidityMs ?? DAYS(3650)
  const servingValidityMs = options.servingValidityMs ?? DAYS(365)
  const secretPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`
  let current: Bundle | null = null
  let timer: NodeJS.Timeout | null = null
  let notify: (certificate: KeyAndCertificate) => void = () => undefined

  const read = async (): Promise<{ bundle: Bundle | null; resourceVersion: string | null }> => {
    let secret: SecretObject
    try {
      secret = await kube.call<SecretObject>('GET', `${secretPath}/${encodeURIComponent(secretName)}`)
    } catch (error) {
      if (isStatus(error, 404)) return { bundle: null, resourceVersion: null }
      throw error
    }
    const data = secret.data ?? {}
    const bundle = { caBundle: unb64(data['ca.crt']), caKey: unb64(data['ca.key']), serving: { certificate: unb64(data['tls.crt']), key: unb64(data['tls.key']) } }
    const complete = bundle.caBundle !== '' && bundle.caKey !== '' && bundle.serving.certificate !== '' && bundle.serving.key !== ''
    return { bundle: complete ? bundle : null, resourceVersion: secret.metadata.resourceVersion ?? null }
  }

  /** What the Secret should hold now; null when what it holds is still good. */
  const renewed = (bundle: Bundle | null): Bundle | null => {
    const at = now()
    // Renew with a third of the validity left (the cert-manager default is the same fraction).
    const caCurrent = bundle ? pemBlocks(bundle.caBundle)[0] : undefined
    const caGood = bundle !== null && caCurrent !== undefined && remainingValidityMs(caCurrent, at) > caValidityMs / 3
    const servingGood = caGood && remainingValidityMs(bundle.serving.certificate, at) > servingValidityMs / 3 && servesNames(bundle.serving.certificate, caCurrent, options.names)
    if (caGood && servingGood) return null
    let caKey: string
    let caCertificate: string
    let caBundle: string
    if (caGood) {
      caKey = bundle.caKey
      caCertificate = caCurrent
      caBundle = bundle.caBundle
    } else {
      const ca = issueCa('gatehouse-webhook-ca', caValidityMs, at)
      caKey = ca.key
      caCertificate = ca.certificate
      // The old CA stays trusted until it expires: replicas still serving its certificate keep working.
      const stillValid = bundle ? pemBlocks(bundle.caBundle).filter((pem) => remainingValidityMs(pem, at) > 0) : []
      caBundle = [ca.certificate, ...stillValid].join('')
    }
    const serving = issueServingCertificate({ certificate: caCertificate, key: caKey }, options.names, servingValidityMs, at)
    return { caBundle, caKey, serving }
  }

  const write = async (bundle: Bundle, resourceVersion: string | null): Promise<boolean> => {
    const body: SecretObject = {
      metadata: { name: secretName, namespace, ...(resourceVersion === null ? {} : { resourceVersion }) },
      type: 'Opaque',
      data: { 'ca.crt': b64(bundle.caBundle), 'ca.key': b64(bundle.caKey), 'tls.crt': b64(bundle.serving.certificate), 'tls.key': b64(bundle.serving.key) },
    }
    try {
      if (resourceVersion === null) await kube.call('POST', secretPath, { apiVersion: 'v1', kind: 'Secret', ...body })
      else await kube.call('PUT', `${secretPath}/${encodeURIComponent(secretName)}`, { apiVersion: 'v1', kind: 'Secret', ...body })
      return true
    } catch (error) {
      // Another replica wrote first: take theirs on the next read.
      if (isStatus(error, 409)) return false
      throw error
    }
  }

  const patchCaBundle = async (caBundle: string): Promise<void> => {
    if (options.webhookConfigName === null) return
    const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(options.webhookConfigName)}`
    let config: { webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string } }> }
    try {
      config = await kube.call('GET', path)
    } catch (error) {
      if (isStatus(error, 404)) return
      throw error
    }
    const wanted = b64(caBundle)
    const stale = (config.webhooks ?? []).filter((webhook) => webhook.clientConfig?.caBundle !== wanted)
    if (stale.length === 0) return
    // Strategic merge on `webhooks` (merge key: name) touches only caBundle of each webhook.
    await kube.call('PATCH', path, { webhooks: stale.map((webhook) => ({ name: webhook.name, clientConfig: { caBundle: wanted } })) }, 'application/strategic-merge-patch+json')
  }

  const check = async (): Promise<void> => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { bundle, resourceVersion } = await read()
      const next = renewed(bundle)
      const chosen = next ?? bundle!
      if (next !== null && !(await write(next, resourceVersion))) continue
      const changed = current === null || current.serving.certificate !== chosen.serving.certificate
      current = chosen
      await patchCaBundle(chosen.caBundle)
      if (changed) notify(chosen.serving)
      return
    }
    throw new Error(`could not settle the webhook certificate Secret ${namespace}/${secretName} (conflicting writers)`)
  }

  return {
    current() {
      if (!current) throw new Error('the webhook certificate is not loaded yet')
      return current.serving
    },
    caBundle: () => current?.caBundle ?? null,
    async start(onChange) {
      await check()
      notify = onChange
      timer = setInterval(() => void check().catch((error: unknown) => options.onError?.(error)), options.checkIntervalMs ?? 3_600_000)
      timer.unref()
    },
    check,
    stop() {
      if (timer) clearInterval(timer)
    },
  }
}

export function fileCertificates(directory: string, options: { checkIntervalMs?: number; onError?: (error: unknown) => void } = {}): CertificateSource {
  let current: KeyAndCertificate | null = null
  let caBundle: string | null = null
  let timer: NodeJS.Timeout | null = null
  let notify: (certificate: KeyAndCertificate) => void = () => undefined
  const check = async (): Promise<void> => {
    const [certificate, key, ca] = await Promise.all([
      readFile(join(directory, 'tls.crt'), 'utf8'),
      readFile(join(directory, 'tls.key'), 'utf8'),
      // cert-manager writes the issuer's CA beside the pair; absent with some issuers.
      readFile(join(directory, 'ca.crt'), 'utf8').catch(() => null),
    ])
    new X509Certificate(certificate) // throws on a half-written file: keep the previous one
    caBundle = ca
    if (current?.certificate === certificate && current.key === key) return
    current = { certificate, key }
    notify(current)
  }
  return {
    current() {
      if (!current) throw new Error('the webhook certificate is not loaded yet')
      return current
    },
    caBundle: () => caBundle,
    async start(onChange) {
      await check()
      notify = onChange
      timer = setInterval(() => void check().catch((error: unknown) => options.onError?.(error)), options.checkIntervalMs ?? 60_000)
      timer.unref()
    },
    check,
    stop() {
      if (timer) clearInterval(timer)
    },
  }
}
