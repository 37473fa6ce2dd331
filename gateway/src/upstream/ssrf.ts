/**
 * The SSRF-safe dispatcher for outbound calls a tenant can point somewhere (a config's
 * `custom_host`). Every address a name resolves to is checked before a socket opens (an address
 * literal too), and the address the socket actually connected to is checked again, so neither a
 * hostname resolving to an internal address nor DNS rebinding gets through. Cloud
 * metadata, unspecified, multicast and documentation ranges are always refused; loopback, private,
 * link-local and CGNAT ranges only when the provider's admin set `allowPrivateNetwork: "true"`
 * (in-cluster model servers, and the loopback simulators tests use).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, isIPv4, type LookupFunction } from 'node:net'
import { Agent, buildConnector } from 'undici'
import { GatewayError } from '../errors.ts'
import { defaultTimeouts } from './transport.ts'

function blockList(v4: ReadonlyArray<[string, number]>, v6: ReadonlyArray<[string, number]>): BlockList {
  const list = new BlockList()
  for (const [network, prefix] of v4) list.addSubnet(network, prefix, 'ipv4')
  for (const [network, prefix] of v6) list.addSubnet(network, prefix, 'ipv6')
  return list
}

/** Never reachable through a custom host, whatever the provider allows. */
const alwaysBlocked = blockList(
  [
    ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
    ['169.254.169.254', 32], // AWS, GCP, Azure, OpenStack metadata
    ['169.254.170.2', 32], // ECS task metadata
    ['100.100.100.200', 32], // Alibaba Cloud metadata
    ['192.0.0.0', 24], // IETF protocol assignments (includes Oracle Cloud metadata 192.0.0.192)
    ['192.0.2.0', 24], // documentation
    ['198.51.100.0', 24], // documentation
    ['203.0.113.0', 24], // documentation
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved and broadcast
  ],
  [
    ['::', 128], // unspecified
    ['fd00:ec2::254', 128], // AWS metadata over IPv6
    ['ff00::', 8], // multicast
    ['2001:db8::', 32], // documentation
    ['100::', 64], // discard
  ],
)

/** Internal networks: refused unless the provider allows private networks. */
const privateNetworks = blockList(
  [
    ['127.0.0.0', 8], // loopback
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['169.254.0.0', 16], // link-local
    ['100.64.0.0', 10], // carrier-grade NAT
    ['198.18.0.0', 15], // benchmarking
  ],
  [
    ['::1', 128], // loopback
    ['fc00::', 7], // unique local
    ['fe80::', 10], // link-local
    // Prefixes that embed or translate to an IPv4 address the v4 rules could not see.
    ['64:ff9b::', 96], // NAT64
    ['2002::', 16], // 6to4
    ['2001::', 32], // Teredo
  ],
)

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i

export function isBlockedAddress(address: string, allowPrivateNetwork: boolean): boolean {
  const mapped = MAPPED_V4.exec(address)
  const ip = mapped ? mapped[1]! : address
  const family = isIPv4(ip) ? 'ipv4' : 'ipv6'
  if (alwaysBlocked.check(ip, family)) return true
  return !allowPrivateNetwork && privateNetworks.check(ip, family)
}

export interface SsrfDispatcherOptions {
  allowPrivateNetwork: boolean
  connectTimeoutMs?: number
  /** The name resolver (node:dns `lookup` by default); tests map names to addresses with it. */
  lookup?: typeof dnsLookup
}

function blockedHostError(hostname: string): GatewayError {
  return new GatewayError('upstream_address_blocked', `The custom host '${hostname}' leads to an address this provider may not reach`)
}

/**
 * Resolves a name and refuses it before any socket opens when any of its addresses is blocked: a
 * metadata address is never even sent a SYN. The connected address is checked again afterwards.
 */
function guardedLookup(resolve: typeof dnsLookup, allowPrivateNetwork: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const list = addresses as unknown as LookupAddress[]
      if (list.length === 0 || list.some((entry) => isBlockedAddress(entry.address, allowPrivateNetwork))) {
        return callback(blockedHostError(hostname) as unknown as NodeJS.ErrnoException, '', 0)
      }
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, list)
      return callback(null, list[0]!.address, list[0]!.family)
    })
  }
}

function guardedConnector(options: SsrfDispatcherOptions): buildConnector.connector {
  const lookup = guardedLookup(options.lookup ?? dnsLookup, options.allowPrivateNetwork)
  const connect = buildConnector({ timeout: options.connectTimeoutMs ?? defaultTimeouts.connectMs, lookup } as buildConnector.BuildOptions)
  return (target, callback) => {
    // An address literal is never looked up: check it here, before connecting.
    const literal = target.hostname.replace(/^\[|\]$/g, '')
    if (isIP(literal) !== 0 && isBlockedAddress(literal, options.allowPrivateNetwork)) return callback(blockedHostError(target.hostname), null)
    connect(target, (error, socket) => {
      if (error !== null) return callback(error, null)
      const address = socket.remoteAddress
      if (address === undefined || isBlockedAddress(address, options.allowPrivateNetwork)) {
        socket.destroy()
        return callback(blockedHostError(target.hostname), null)
      }
      callback(null, socket)
    })
  }
}

export function createSsrfSafeDispatcher(options: SsrfDispatcherOptions): Agent {
  return new Agent({
    connect: guardedConnector(options),
    headersTimeout: defaultTimeouts.firstByteMs,
    bodyTimeout: defaultTimeouts.idleMs,
    keepAliveTimeout: 10_000,
    // Custom hosts are many and cold; keep per-origin pools small.
    connections: 64,
  })
}

const shared = new Map<boolean, Agent>()

/** The process-wide guarded dispatcher for one setting; connections to custom hosts are pooled here. */
export function ssrfSafeDispatcher(allowPrivateNetwork: boolean): Agent {
  let agent = shared.get(allowPrivateNetwork)
  if (!agent) {
    agent = createSsrfSafeDispatcher({ allowPrivateNetwork })
    shared.set(allowPrivateNetwork, agent)
  }
  return agent
}

export async function closeSsrfDispatchers(): Promise<void> {
  const agents = [...shared.values()]
  shared.clear()
  await Promise.allSettled(agents.map((agent) => agent.close()))
}
