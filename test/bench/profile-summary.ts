/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function, largest first,
 * so a bench run with `--profile` ends with the gateway's hot spots instead of a file to open.
 *
 *   node test/bench/profile-summary.ts bench-results/profiles/<file>.cpuprofile [--top 30]
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface HotSpot {
  function: string
  location: string
  selfMs: number
  selfPercent: number
}

function location(node: ProfileNode): string {
  const { url, lineNumber } = node.callFrame
  if (!url) return '(native)'
  const trimmed = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'node_modules/').replace(/^.*\/(gateway|test)\/src\//, '$1/src/')
  return `${trimmed}:${lineNumber + 1}`
}

/** Self time per function (same name and location merged), and the share of sampled time. */
export function hotSpots(profile: CpuProfile, top = 25): { totalMs: number; idlePercent: number; spots: HotSpot[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  let totalUs = 0
  let idleUs = 0
  const merged = new Map<string, HotSpot>()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (!node) continue
    totalUs += us
    const name = node.callFrame.functionName || '(anonymous)'
    if (name === '(idle)') idleUs += us
    const key = `${name} ${location(node)}`
    const spot = merged.get(key) ?? { function: name, location: location(node), selfMs: 0, selfPercent: 0 }
    spot.selfMs += us / 1000
    merged.set(key, spot)
  }
  const busyUs = Math.max(1, totalUs - idleUs)
  const spots = [...merged.values()]
    .filter((spot) => spot.function !== '(idle)')
    .map((spot) => ({ ...spot, selfPercent: (spot.selfMs * 1000 * 100) / busyUs }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top)
  return { totalMs: totalUs / 1000, idlePercent: (idleUs * 100) / Math.max(1, totalUs), spots }
}

export function formatHotSpots(summary: ReturnType<typeof hotSpots>): string {
  const lines = [`sampled ${(summary.totalMs / 1000).toFixed(1)} s, idle ${summary.idlePercent.toFixed(0)} %; self time as a share of busy time:`]
  for (const spot of summary.spots) lines.push(`${spot.selfPercent.toFixed(1).padStart(5)} %  ${spot.selfMs.toFixed(0).padStart(6)} ms  ${spot.function}  ${spot.location}`)
  return lines.join('\n')
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } })
  const file = positionals[0]
  if (!file) {
    process.stderr.write('usage: node test/bench/profile-summary.ts <file.cpuprofile> [--top N]\n')
    process.exit(2)
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  process.stdout.write(formatHotSpots(hotSpots(profile, Number(values.top ?? 30))) + '\n')
}
