import { createServer, type Server } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { createSsrfSafeDispatcher, isBlockedAddress, type LookupFunction } from './ssrf.ts'

/** Resolves every name to one address, as a hostile DNS record would. */
function resolvingTo(address: string): LookupFunction {
  return (_hostname, options, callback) => {
    const family = address.includes(':') ? 6 : 4
    if (options.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }
}

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

  it('checks the connected address when a name resolves to loopback', async () => {
    const port = new URL(origin).port
    const before = hits
    const refused = createSsrfSafeDispatcher({ allowPrivateNetwork: false, lookup: resolvingTo('127.0.0.1') })
    const error = await refused.request({ origin: `http://models.example.test:${port}`, path: '/', method: 'GET' }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'upstream_address_blocked' })
    expect(hits).toBe(before)
    await refused.close()

    const allowed = createSsrfSafeDispatcher({ allowPrivateNetwork: true, lookup: resolvingTo('127.0.0.1') })
    const response = await allowed.request({ origin: `http://models.example.test:${port}`, path: '/', method: 'GET' })
    expect(await response.body.text()).toBe('reached')
    await allowed.close()
  })

  // 0.0.0.0 is in the always-refused set and, if ever connected, lands on this host: the test proves
  // the always-refused ranges hold where private networks are allowed without sending a packet off
  // the machine (the metadata addresses share that set; see isBlockedAddress above).
  it('refuses always-blocked addresses even where private networks are allowed, before connecting', async () => {
    const port = new URL(origin).port
    const before = hits
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: true, lookup: resolvingTo('0.0.0.0') })
    const viaName = await dispatcher.request({ origin: `http://metadata.example.test:${port}`, path: '/', method: 'GET' }).catch((caught: unknown) => caught)
    expect(viaName).toMatchObject({ code: 'upstream_address_blocked' })
    const literal = await dispatcher.request({ origin: `http://0.0.0.0:${port}`, path: '/', method: 'GET' }).catch((caught: unknown) => caught)
    expect(literal).toMatchObject({ code: 'upstream_address_blocked' })
    expect(hits).toBe(before)
    await dispatcher.close()
  })
})

/**
 * Metadata addresses through the dispatcher, without ever opening a socket to one: `net.connect`
 * (what undici's connector calls) is replaced by a stand-in that runs the lookup it was given, as
 * Node would, and records any address a real connect would have gone to instead of connecting.
 * Break tried: the guarded `lookup` left out of buildConnector's options (ssrf.ts) -> the stand-in
 * was handed the bare name to connect to (a real connect would have resolved it to 169.254.169.254)
 * and the first test failed.
 */
describe('SSRF-safe dispatcher: metadata addresses, even with private networks allowed', () => {
  const wouldConnect: string[] = []
  let connectSpy: MockInstance<typeof net.connect>

  beforeEach(() => {
    wouldConnect.length = 0
    connectSpy = vi.spyOn(net, 'connect').mockImplementation(((options: net.NetConnectOpts & { host?: string; lookup?: net.LookupFunction }) => {
      const socket = new net.Socket()
      const refuseAll = (address: string): void => {
        wouldConnect.push(address)
        socket.destroy(new Error('the test stand-in never connects'))
      }
      const host = options.host ?? 'localhost'
      if (net.isIP(host) !== 0 || !options.lookup) process.nextTick(refuseAll, host)
      else {
        options.lookup(host, {}, (error, address) => {
          if (error) socket.destroy(error)
          else refuseAll(String(address))
        })
      }
      return socket
    }) as unknown as typeof net.connect)
  })
  afterEach(() => {
    connectSpy.mockRestore()
  })

  const metadataResolver = resolvingTo('169.254.169.254')

  it('refuses a name that resolves to a metadata address before connecting', async () => {
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: true, lookup: metadataResolver })
    const error = await dispatcher.request({ origin: 'http://metadata.example.test', path: '/latest/meta-data/', method: 'GET' }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'upstream_address_blocked' })
    expect(wouldConnect).toEqual([])
    await dispatcher.close()
  })

  it.each(['http://169.254.169.254', 'http://[fd00:ec2::254]', 'http://100.100.100.200'])('refuses the address literal %s before connecting', async (origin) => {
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: true })
    const error = await dispatcher.request({ origin, path: '/', method: 'GET' }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'upstream_address_blocked' })
    expect(wouldConnect).toEqual([])
    expect(connectSpy).not.toHaveBeenCalled()
    await dispatcher.close()
  })

  it('lets a name through to connect when its addresses are allowed (the stand-in shows where it would go)', async () => {
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: true, lookup: resolvingTo('127.0.0.1') })
    await dispatcher.request({ origin: 'http://model.example.test:9', path: '/', method: 'GET' }).catch(() => undefined)
    expect(wouldConnect).toEqual(['127.0.0.1'])
    await dispatcher.close()
  })
})
