/**
 * X.509 for the admission webhook: a CA of our own and a serving certificate it signs, valid for
 * the webhook Service's DNS names (and any extra names or IPs, e.g. 127.0.0.1 in tests). Keys are
 * made by node:crypto; node-forge only assembles and signs the certificates (node:crypto cannot).
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import forge from 'node-forge'

export interface KeyAndCertificate {
  /** PEM */
  certificate: string
  /** PEM (PKCS#8) */
  key: string
}

const DAY_MS = 86_400_000

function rsaKeyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  }
}

function baseCertificate(publicPem: string, commonName: string, validForMs: number, now: Date): forge.pki.Certificate {
  const certificate = forge.pki.createCertificate()
  certificate.publicKey = forge.pki.publicKeyFromPem(publicPem)
  // Positive 128-bit serial (a leading 0x00..0x7f byte keeps it positive in DER).
  certificate.serialNumber = `7${randomBytes(16).toString('hex').slice(1)}`
  // Back-dated a little: the API server's clock may lag ours.
  certificate.validity.notBefore = new Date(now.getTime() - 5 * 60_000)
  certificate.validity.notAfter = new Date(now.getTime() + validForMs)
  certificate.setSubject([{ name: 'commonName', value: commonName }])
  return certificate
}

export function issueCa(commonName: string, validForMs: number, now = new Date()): KeyAndCertificate {
  const keys = rsaKeyPair()
  const certificate = baseCertificate(keys.publicPem, commonName, validForMs, now)
  certificate.setIssuer(certificate.subject.attributes)
  certificate.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ])
  certificate.sign(forge.pki.privateKeyFromPem(keys.privatePem), forge.md.sha256.create())
  return { certificate: forge.pki.certificateToPem(certificate), key: keys.privatePem }
}

export function issueServingCertificate(ca: KeyAndCertificate, names: readonly string[], validForMs: number, now = new Date()): KeyAndCertificate {
  const keys = rsaKeyPair()
  const caCertificate = forge.pki.certificateFromPem(ca.certificate)
  const certificate = baseCertificate(keys.publicPem, names[0] ?? 'gatehouse-webhook', validForMs, now)
  certificate.setIssuer(caCertificate.subject.attributes)
  certificate.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: names.map((name) => (isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })) },
  ])
  certificate.sign(forge.pki.privateKeyFromPem(ca.key), forge.md.sha256.create())
  return { certificate: forge.pki.certificateToPem(certificate), key: keys.privatePem }
}

/** Milliseconds until the first certificate in a PEM expires (negative once expired). */
export function remainingValidityMs(pem: string, now = new Date()): number {
  return Date.parse(new X509Certificate(pem).validTo) - now.getTime()
}

/** Whether `certificate` was signed by `caPem` and names every one of `names`. */
export function servesNames(certificate: string, caPem: string, names: readonly string[]): boolean {
  const leaf = new X509Certificate(certificate)
  if (!leaf.verify(new X509Certificate(caPem).publicKey)) return false
  return names.every((name) => (isIP(name) ? leaf.checkIP(name) !== undefined : leaf.checkHost(name) !== undefined))
}

export const DAYS = (count: number): number => count * DAY_MS
