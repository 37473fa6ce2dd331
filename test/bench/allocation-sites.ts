/**
 * Where a piece of code allocates, in bytes per call: V8's sampling heap profiler, told to keep the
 * samples of objects the young and the old generation collectors freed since (by default it
 * reports only what is still alive at the end), summed per allocating function. Young garbage is
 * cheap one by one, but it is what fills the semi-spaces and decides how often scavenges run and
 * how much of the requests in flight they copy and promote (gc-promotion.ts).
 */
import { Session } from 'node:inspector/promises'

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

export interface AllocationSite {
  site: string
  bytesPerCall: number
}

/** Runs `work` `calls` times under the sampling heap profiler; returns the `top` sites by bytes. */
export async function allocationSites(work: () => Promise<void>, calls: number, top = 25): Promise<{ totalBytesPerCall: number; sites: AllocationSite[] }> {
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
  for (let call = 0; call < calls; call++) await work()
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } }
  session.disconnect()
  const bySite = new Map<string, number>()
  const visit = (node: ProfileNode): void => {
    if (node.selfSize > 0) {
      const frame = node.callFrame
      const file = frame.url.replace(/^.*\/(gateway|node_modules|test)\//, '$1/')
      const site = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
    }
    for (const child of node.children) visit(child)
  }
  visit(profile.head)
  const total = [...bySite.values()].reduce((sum, bytes) => sum + bytes, 0)
  const sites = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top).map(([site, bytes]) => ({ site, bytesPerCall: bytes / calls }))
  return { totalBytesPerCall: total / calls, sites }
}

export function formatAllocationSites(label: string, result: { totalBytesPerCall: number; sites: AllocationSite[] }): string {
  return [`${label}: ${result.totalBytesPerCall.toFixed(0)} B allocated per call`, ...result.sites.map((site) => `  ${site.bytesPerCall.toFixed(0).padStart(7)} B  ${site.site}`)].join('\n')
}
