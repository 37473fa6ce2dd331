import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateEncryptionKey, KeyringError, parseKeyring } from '../snapshot/envelope.ts'
import { loadPersistedSnapshot, persistSnapshot } from './persisted.ts'

const keyring = parseKeyring(generateEncryptionKey())
let directory: string

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-persisted-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('persisted snapshots', () => {
  it('round-trips a snapshot sealed, readable by the owner only, with no secret in the file', async () => {
    const path = join(directory, 'nested', 'snapshot')
    await persistSnapshot(path, keyring, { generation: 7, secret: 'sk-on-disk' })
    const text = await readFile(path, 'utf8')
    expect(text.startsWith('ghe1.')).toBe(true)
    expect(text).not.toContain('sk-on-disk')
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect(await loadPersistedSnapshot(path, keyring)).toEqual({ generation: 7, secret: 'sk-on-disk' })
  })

  it('answers null when there is no file yet', async () => {
    expect(await loadPersistedSnapshot(join(directory, 'absent'), keyring)).toBeNull()
  })

  it('throws on a file sealed under another key, or changed by one bit', async () => {
    const path = join(directory, 'snapshot')
    await persistSnapshot(path, parseKeyring(generateEncryptionKey()), { generation: 1 })
    await expect(loadPersistedSnapshot(path, keyring)).rejects.toBeInstanceOf(KeyringError)

    await persistSnapshot(path, keyring, { generation: 2 })
    const parts = (await readFile(path, 'utf8')).split('.')
    const tag = Buffer.from(parts[3]!, 'base64url')
    tag[0]! ^= 0x80
    parts[3] = tag.toString('base64url')
    await writeFile(path, parts.join('.'))
    await expect(loadPersistedSnapshot(path, keyring)).rejects.toThrow(/failed authentication/)
  })

  it('replaces the file whole: a second write leaves no temporary file behind', async () => {
    const path = join(directory, 'replaced')
    await persistSnapshot(path, keyring, { generation: 1 })
    await persistSnapshot(path, keyring, { generation: 2 })
    expect(await loadPersistedSnapshot(path, keyring)).toEqual({ generation: 2 })
    await expect(stat(`${path}.${process.pid}.tmp`)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
