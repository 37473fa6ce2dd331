import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { createSsrfSafeDispatcher, isBlockedAddress } from './ssrf.ts'

describe('isBlockedAddress', () => {
  it.each([
    ['127.0.0.1', true, false],
    ['10.1.2.3', true, false],
    ['172.16.0.1', true, false],
    ['172.32.0.1', false, false],
    ['192.168.1.1', true, false],
    ['169.254.10.10', true, false],
    ['100.64.0.1', true, false],
    ['::1', true, false],
    ['fd12:3456::1', true, false],
    ['fe80::1', true, false],
    ['::ffff:127.0.0.1', true, false],
    ['::ffff:10.0.0.1', true, false],
    ['64:ff9b::a00:1', true, false],
    // Always refused, even where private networks are allowed.
    ['169.254.169.254', true, true],
    ['fd00:ec2::254', true, true],
    ['::ffff:169.254.169.254', true, true],
    ['100.100.100.200', true, true],
    ['0.0.0.0', true, true],
    ['::', true, true],
    ['224.0.0.1', true, true],
    ['255.255.255.255', true, true],
    // Public addresses.
    ['8.8.8.8', false, false],
    ['1.1.1.1', false, false],
    ['2606:4700:4700::1111', false, false],
  ])('%s: blocked=%s, blocked even when private is allowed=%s', (address, blocked, blockedWhenPrivateAllowed) => {
    expect(isBlockedAddress(address, false)).toBe(blocked)
    expect(isBlockedAddress(address, true)).toBe(blockedWhenPrivateAllowed)
  })
})

describe('SSRF-safe dispatcher', () => {
  let server: Server
  let origin: string
  let hits = 0

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++
      res.end('reached')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  it('refuses a connection that landed on loopback, before any request byte is sent', async () => {
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: false })
    const before = hits
    // `localhost` resolves to loopback: the check is on the connected address, not the name.
    const hostOrigin = origin.replace('127.0.0.1', 'localhost')
    const error = await dispatcher.request({ origin: hostOrigin, path: '/', method: 'GET' }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ code: 'upstream_address_blocked' })
    expect(hits).toBe(before)
    await dispatcher.close()
  })

  it('connects when the provider allows private networks', async () => {
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: true })
    const response = await dispatcher.request({ origin, path: '/', method: 'GET' })
    expect(await response.body.text()).toBe('reached')
    await dispatcher.close()
  })
})
