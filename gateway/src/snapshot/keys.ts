/**
 * Gatehouse API key format, shared by the control plane (which mints keys) and the gateway (which
 * checks them): `ghk_<type>_<body><checksum>`.
 *  - type: `adm` (organisation/admin key) or `ws` (workspace key);
 *  - body: 192 random bits in base62 (33 characters);
 *  - checksum: CRC-32 of everything before it, base62 (6 characters), checked before any lookup so
 *    typos and random probes never reach the key table.
 * Keys are stored as HMAC-SHA256 with a pepper held outside the database.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'

export type KeyType = 'admin' | 'workspace'

const PREFIX_BY_TYPE: Record<KeyType, string> = { admin: 'ghk_adm_', workspace: 'ghk_ws_' }
const BODY_LENGTH = 33
const CHECKSUM_LENGTH = 6
const KEY_PATTERN = /^ghk_(adm|ws)_([0-9A-Za-z]{33})([0-9A-Za-z]{6})$/
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

function toBase62(value: bigint, width: number): string {
  let out = ''
  let rest = value
  while (rest > 0n) {
    out = BASE62[Number(rest % 62n)] + out
    rest /= 62n
  }
  return out.padStart(width, '0')
}

function checksum(text: string): string {
  return toBase62(BigInt(crc32(text)), CHECKSUM_LENGTH)
}

export function generateApiKey(type: KeyType): string {
  const body = toBase62(BigInt(`0x${randomBytes(24).toString('hex')}`), BODY_LENGTH)
  const head = PREFIX_BY_TYPE[type] + body
  return head + checksum(head)
}

/** Syntax and checksum only; says nothing about whether the key exists. */
export function parseApiKey(raw: string): { type: KeyType } | null {
  const match = KEY_PATTERN.exec(raw)
  if (!match) return null
  const head = raw.slice(0, raw.length - CHECKSUM_LENGTH)
  if (checksum(head) !== match[3]) return null
  return { type: match[1] === 'adm' ? 'admin' : 'workspace' }
}

export function hashApiKey(raw: string, pepper: string): string {
  return createHmac('sha256', pepper).update(raw).digest('hex')
}

/** A short, non-secret hint for lists and logs: the type prefix and the last four characters. */
export function apiKeyHint(raw: string): string {
  const prefixEnd = raw.indexOf('_', 4) + 1
  return `${raw.slice(0, prefixEnd)}…${raw.slice(-4)}`
}

export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
}
