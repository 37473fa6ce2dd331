/**
 * What the benchmark reads from /proc: a process's CPU time and minor page faults (`/proc/<pid>/stat`), its resident and
 * peak resident memory (`/proc/<pid>/status`), and the whole machine's busy time (`/proc/stat`) so
 * the report can say how much CPU processes outside the benchmark took (the machine is shared).
 * Linux only; on other systems every reading is null and the report leaves those columns empty.
 */
import { readFileSync } from 'node:fs'

/** Clock ticks per second of the utime/stime fields; 100 on every Linux build we run on. */
const CLOCK_TICKS_PER_S = 100

export interface ProcessCpu {
  /** user + system CPU time of the process, milliseconds. */
  cpuMs: number
  /**
   * Minor page faults (first touches of memory the process mapped). On a VM whose host backs guest
   * memory lazily (this project's bench machine: Firecracker), each costs tens of µs of CPU, so
   * memory a process maps and releases again is a cost there that a count of them explains.
   */
  minorFaults: number
}

export interface ProcessMemory {
  rssKb: number
  /** Peak resident set over the process's life (VmHWM). */
  hwmKb: number
}

export interface SystemCpu {
  busyTicks: number
  totalTicks: number
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

export function readProcessCpu(pid: number): ProcessCpu | null {
  const stat = readText(`/proc/${pid}/stat`)
  if (stat === null) return null
  // The command name (field 2) is in parentheses and may contain spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // After the name, field 3 (state) is index 0, so minflt (10), utime (14) and stime (15) are 7, 11 and 12.
  const minorFaults = Number(fields[7])
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  if (!Number.isFinite(utime) || !Number.isFinite(stime) || !Number.isFinite(minorFaults)) return null
  return { cpuMs: ((utime + stime) * 1000) / CLOCK_TICKS_PER_S, minorFaults }
}

function statusField(status: string, name: string): number | null {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
  return match ? Number(match[1]) : null
}

export function readProcessMemory(pid: number): ProcessMemory | null {
  const status = readText(`/proc/${pid}/status`)
  if (status === null) return null
  const rssKb = statusField(status, 'VmRSS')
  const hwmKb = statusField(status, 'VmHWM')
  if (rssKb === null || hwmKb === null) return null
  return { rssKb, hwmKb }
}

export function readSystemCpu(): SystemCpu | null {
  const stat = readText('/proc/stat')
  if (stat === null) return null
  const line = stat.slice(0, stat.indexOf('\n'))
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const ticks = line.trim().split(/\s+/).slice(1).map(Number)
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0)
  // guest time is already included in user/nice.
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0)
  return { busyTicks: total - idle, totalTicks: total }
}

export function systemBusyCpuMs(from: SystemCpu, to: SystemCpu): number {
  return ((to.busyTicks - from.busyTicks) * 1000) / CLOCK_TICKS_PER_S
}
