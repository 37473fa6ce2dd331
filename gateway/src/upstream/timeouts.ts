/** How long an upstream call may take, by phase; shared by the transport and the SSRF-checked connector. */
export interface UpstreamTimeouts {
  connectMs: number
  /** Time to the response headers: the provider's time to first byte. */
  firstByteMs: number
  /** Longest silence between body chunks. */
  idleMs: number
}

export const defaultTimeouts: UpstreamTimeouts = { connectMs: 10_000, firstByteMs: 120_000, idleMs: 300_000 }
