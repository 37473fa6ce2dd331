/**
 * Where a request to a provider goes: the provider's base URL joined with the adapter's path (and
 * query). Joined once per base URL and path, as strings: building and editing a `URL` for every
 * request was a visible share of the request path (callgrind, test/bench/instructions.ts), and most
 * requests of a provider use one or two paths. The join itself is the WHATWG URL parser's (dot
 * segments resolved, characters escaped), so the cached strings are exactly what a fresh join gives.
 */

export interface UpstreamTarget {
  /** `scheme://host[:port]` */
  readonly origin: string
  /** Path and query, as sent on the request line. */
  readonly path: string
}

/** Per base URL: bounded, since passthrough paths come from callers (an id in a path is a new entry). */
const joined = new WeakMap<URL, Map<string, UpstreamTarget>>()
const MAX_PATHS_PER_BASE = 256

function joinUrl(base: URL, path: string): URL {
  const prefix = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname
  const url = new URL(base.origin)
  const queryAt = path.indexOf('?')
  url.pathname = prefix + (queryAt === -1 ? path : path.slice(0, queryAt))
  if (queryAt !== -1) url.search = path.slice(queryAt)
  return url
}

export function upstreamTarget(base: URL, path: string): UpstreamTarget {
  let paths = joined.get(base)
  if (paths === undefined) {
    paths = new Map()
    joined.set(base, paths)
  }
  let target = paths.get(path)
  if (target === undefined) {
    const url = joinUrl(base, path)
    target = { origin: url.origin, path: url.pathname + url.search }
    if (paths.size >= MAX_PATHS_PER_BASE) paths.clear()
    paths.set(path, target)
  }
  return target
}
