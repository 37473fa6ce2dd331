/** Helpers the Kubernetes suites share: installing CRDs, running kubectl/helm, reading YAML. */
import { execFile } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { ApiException } from '@kubernetes/client-node'
import { toolPath, type ApiServerConnection } from './apiserver.ts'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const execFileAsync = promisify(execFile)

const CRD_ESTABLISH_TIMEOUT_MS = 30_000

export interface ToolResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs a tool from .tools/k8s/bin; never throws on a non-zero exit (callers assert on it). */
export async function runTool(name: string, args: string[], env: Record<string, string> = {}): Promise<ToolResult> {
  try {
    const { stdout, stderr } = await execFileAsync(toolPath(name), args, {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(error) }
  }
}

export function kubectl(server: ApiServerConnection, args: string[]): Promise<ToolResult> {
  return runTool('kubectl', ['--kubeconfig', server.kubeconfigPath, ...args])
}

/** Every YAML document of the files in a folder (sorted by file name), with its file. */
export async function readYamlDir(dir: string): Promise<Array<{ file: string; obj: Record<string, unknown> }>> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()
  const out: Array<{ file: string; obj: Record<string, unknown> }> = []
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as Record<string, unknown> | null
      if (obj) out.push({ file, obj })
    }
  }
  return out
}

/**
 * Applies the CRD files of a folder with kubectl (server-side apply, as users and the chart do) and
 * waits until the API server serves them. Not through client-node's typed CRD client: its model
 * serializer drops keys it does not map (`enum`, `x-kubernetes-validations`) above `items`.
 */
export async function installCrds(server: ApiServerConnection, dir: string): Promise<void> {
  const applied = await kubectl(server, ['apply', '--server-side', '-f', dir])
  if (applied.code !== 0) throw new Error(`kubectl apply ${dir}: ${applied.stderr}`)
  const timeout = `--timeout=${CRD_ESTABLISH_TIMEOUT_MS / 1000}s`
  const waited = await kubectl(server, ['wait', '--for=condition=Established', 'crd', '--all', timeout])
  if (waited.code !== 0) throw new Error(`CRDs not established: ${waited.stderr}`)
}

/** The Status message of a failed API call (what kubectl would print). */
export function apiErrorMessage(error: unknown): string {
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? error.body : JSON.stringify(error.body)
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body
    } catch {
      return body
    }
  }
  return String(error)
}
