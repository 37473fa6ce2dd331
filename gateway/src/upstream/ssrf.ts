/**
 * The SSRF-safe connector for every outbound call a tenant can point somewhere: provider pools
 * (base URLs), a config's `custom_host`, the JWKS fetch. Addresses are checked twice: every address
 * DNS hands back before connecting (and an IP literal before any lookup), then the address the socket
 * actually connected to, so neither a hostname resolving to an internal address nor DNS rebinding
 * gets through. Cloud metadata, unspecified, multicast and documentation ranges are always refused;
 * loopback, private, link-local and CGNAT ranges only where private networks are allowed (a provider
 * an operator declared, or an organisation setting: the snapshot's `network: 'private-allowed'`).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { BlockList, isIP, isIPv4 } from 'node:net'
import type { buildConnector as UndiciConnector } from 'undici'
import { Agent, buildConnector } from '../core/undici.ts'
import { GatewayError } from '../core/errors.ts'
import { defaultTimeouts } from './timeouts.ts'

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

/** `dns.lookup`'s signature, as `net.connect` calls it (`all: true` or not). */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void

export interface SsrfDispatcherOptions {
  allowPrivateNetwork: boolean
  connectTimeoutMs?: number
  /** Name resolution (tests resolve names to loopback with it); `dns.lookup` by default. */
  lookup?: LookupFunction
}

function blocked(hostname: string): GatewayError {
  return new GatewayError('upstream_address_blocked', `The host '${hostname}' leads to an address this provider may not reach`)
}

/** Resolves like `lookup`, but fails when any address it found may not be reached. */
function guardedLookup(lookup: LookupFunction, allowPrivateNetwork: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, options, (error, address, family) => {
      if (error !== null) return callback(error, address, family)
      const addresses = typeof address === 'string' ? [address] : address.map((entry) => entry.address)
      if (addresses.some((candidate) => isBlockedAddress(candidate, allowPrivateNetwork))) return callback(blocked(hostname) as NodeJS.ErrnoException, address, family)
      callback(null, address, family)
    })
  }
}

/** A connector that refuses addresses the options do not allow, before and after connecting. */
export function ssrfConnector(options: SsrfDispatcherOptions): UndiciConnector.connector {
  const connect = buildConnector({
    timeout: options.connectTimeoutMs ?? defaultTimeouts.connectMs,
    lookup: guardedLookup(options.lookup ?? (dnsLookup as LookupFunction), options.allowPrivateNetwork),
  } as UndiciConnector.BuildOptions)
  return (target, callback) => {
    // An IP literal is never looked up: check it before any packet is sent.
    const literal = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname
    if (isIP(literal) !== 0 && isBlockedAddress(literal, options.allowPrivateNetwork)) return callback(blocked(target.hostname), null)
    connect(target, (error, socket) => {
      if (error !== null) return callback(error, null)
      const address = socket.remoteAddress
      if (address === undefined || isBlockedAddress(address, options.allowPrivateNetwork)) {
        socket.destroy()
        return callback(blocked(target.hostname), null)
      }
      callback(null, socket)
    })
  }
}

/**
 * For clients that open their own sockets (the realtime WebSocket): refuses an IP-literal host
 * that may not be reached, and returns the `lookup` that refuses such names, for `http.request`
 * or `ws` options. Every address the socket can connect to passes through that lookup.
 */
export function ssrfSocketOptions(url: URL, allowPrivateNetwork: boolean): { lookup: LookupFunction } {
  const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(literal) !== 0 && isBlockedAddress(literal, allowPrivateNetwork)) throw blocked(url.hostname)
  return { lookup: guardedLookup(dnsLookup as LookupFunction, allowPrivateNetwork) }
}

export function createSsrfSafeDispatcher(options: SsrfDispatcherOptions): Agent {
  return new Agent({
    connect: ssrfConnector(options),
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
