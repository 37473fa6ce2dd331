/**
 * `default.validUrls`: every http(s) URL in the text is well formed, and with `onlyDNS` its host
 * resolves in DNS (looked up, never fetched). No URL at all passes.
 */
import { lookup } from 'node:dns/promises'
import { z } from 'zod'
import { defineCheck, inline, outcome, type CheckOutcome } from './check.ts'

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`)\]]+/g
const MAX_URLS = 32

function parse(candidate: string): URL | null {
  try {
    const url = new URL(candidate.replace(/[.,;:!?]+$/, ''))
    return url.hostname !== '' && (url.hostname.includes('.') || url.hostname === 'localhost') ? url : null
  } catch {
    return null
  }
}

export const validUrls = defineCheck({
  id: 'default.validUrls',
  parameters: z.object({ onlyDNS: z.boolean().default(false), not: z.boolean().default(false), timeoutMs: z.int().min(1).max(30_000).default(3000) }),
  compile({ onlyDNS, not, timeoutMs }) {
    const syntax = (text: string): { urls: URL[]; bad: string[] } => {
      const found = (text.match(URL_IN_TEXT) ?? []).slice(0, MAX_URLS)
      const urls: URL[] = []
      const bad: string[] = []
      for (const candidate of found) {
        const url = parse(candidate)
        if (url) urls.push(url)
        else bad.push(candidate)
      }
      return { urls, bad }
    }
    const verdictOf = (bad: string[]): CheckOutcome => outcome(bad.length === 0, not, 'every URL is valid', `invalid URLs: ${bad.slice(0, 5).join(', ')}`)
    if (!onlyDNS) return inline(({ text }) => verdictOf(syntax(text).bad))
    return {
      timeoutMs,
      failOnError: false,
      mutates: false,
      failsEarly: false,
      async run({ text, signal }) {
        const { urls, bad } = syntax(text)
        const hosts = [...new Set(urls.map((url) => url.hostname))]
        const aborted = new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }))
        const resolved = await Promise.race([Promise.all(hosts.map((host) => lookup(host).then(() => null, () => host))), aborted])
        return verdictOf([...bad, ...resolved.filter((host): host is string => host !== null)])
      },
    }
  },
})
