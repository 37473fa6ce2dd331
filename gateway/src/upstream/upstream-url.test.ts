import { describe, expect, it } from 'vitest'
import { upstreamTarget } from './upstream-url.ts'

describe('upstreamTarget', () => {
  it('joins a base URL and a path as the URL parser does, the same the second time', () => {
    const base = new URL('https://api.example.com/v1/')
    for (const path of ['/chat/completions', '/files/a b?purpose=x y', '/a/../b/./c?q=1#frag', '/models']) {
      const first = upstreamTarget(base, path)
      expect(upstreamTarget(base, path)).toBe(first)
      const queryAt = path.indexOf('?')
      const url = new URL(base.origin)
      url.pathname = '/v1' + (queryAt === -1 ? path : path.slice(0, queryAt))
      if (queryAt !== -1) url.search = path.slice(queryAt)
      expect(first).toEqual({ origin: url.origin, path: url.pathname + url.search })
    }
    expect(upstreamTarget(base, '/a/../b/./c?q=1')).toEqual({ origin: 'https://api.example.com', path: '/v1/b/c?q=1' })
  })

  it('keeps a base URL without a path, and a port', () => {
    expect(upstreamTarget(new URL('http://127.0.0.1:8080'), '/v1/embeddings')).toEqual({ origin: 'http://127.0.0.1:8080', path: '/v1/embeddings' })
  })

  it('joins every path right past the per-base bound (the cache starts over)', () => {
    const base = new URL('https://api.example.com/v1')
    for (let index = 0; index < 1000; index++) expect(upstreamTarget(base, `/files/file-${index}`).path).toBe(`/v1/files/file-${index}`)
  })
})
