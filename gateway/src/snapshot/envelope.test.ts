import { describe, expect, it } from 'vitest'
import { envelopeKeyId, generateEncryptionKey, KeyringError, parseKeyring } from './envelope.ts'

describe('keyring envelopes', () => {
  const material = generateEncryptionKey()

  it('opens what it sealed, only under the same context', () => {
    const keyring = parseKeyring(`k1:${material}`)
    const sealed = keyring.seal('secret text', 'provider:1')
    expect(sealed.startsWith('ghe1.k1.')).toBe(true)
    expect(keyring.open(sealed, 'provider:1')).toBe('secret text')
    expect(() => keyring.open(sealed, 'provider:2')).toThrow(KeyringError)
    // A fresh IV each time: the same text never seals the same way twice.
    expect(keyring.seal('secret text', 'provider:1')).not.toBe(sealed)
  })

  it('rotates: the first key seals, every key opens', () => {
    const old = parseKeyring(`old:${material}`)
    const sealedOld = old.seal('value', 'ctx')
    const rotated = parseKeyring(`new:${generateEncryptionKey()},old:${material}`)
    expect(rotated.primaryKeyId).toBe('new')
    expect(rotated.open(sealedOld, 'ctx')).toBe('value')
    expect(envelopeKeyId(rotated.seal('value', 'ctx'))).toBe('new')
    expect(() => parseKeyring(`new:${generateEncryptionKey()}`).open(sealedOld, 'ctx')).toThrow(/old is not configured/)
  })

  it('never names the ciphertext or key in its errors', () => {
    const keyring = parseKeyring(material)
    const sealed = keyring.seal('value', 'ctx')
    const [version, keyId, iv, tag] = sealed.split('.')
    const forged = [version, keyId, iv, tag, Buffer.from('forged').toString('base64url')].join('.')
    const failure = (() => {
      try {
        keyring.open(forged, 'ctx')
      } catch (error) {
        return error as Error
      }
      return null
    })()
    expect(failure).toBeInstanceOf(KeyringError)
    expect(failure!.message).not.toContain(material)
    expect(failure!.message).not.toContain(tag!)
  })

  it('refuses keys that are not 32 bytes, duplicate ids and non-envelopes', () => {
    expect(() => parseKeyring('')).toThrow(KeyringError)
    expect(() => parseKeyring(Buffer.alloc(16).toString('base64'))).toThrow(/32 bytes/)
    expect(() => parseKeyring(`a:${material},a:${material}`)).toThrow(/duplicate/)
    expect(() => parseKeyring(material).open('plain text', 'ctx')).toThrow(/not a Gatehouse envelope/)
  })
})
