/**
 * A real Kubernetes API server for tests: etcd + kube-apiserver (built by `make test-tools` into
 * .tools/k8s/bin) on 127.0.0.1 ephemeral ports, with a generated service-account key and a static
 * admin token in system:masters. No kubelet, scheduler or controller-manager: no pods run, no
 * garbage collection, namespaces never finish terminating. Tests must not rely on those.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, openSync, closeSync } from 'node:fs'
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { KubeConfig } from '@kubernetes/client-node'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** Where the Go-built tools live; GATEHOUSE_K8S_BIN overrides (e.g. binaries from elsewhere). */
export const K8S_BIN_DIR = process.env.GATEHOUSE_K8S_BIN ?? path.join(repoRoot, '.tools/k8s/bin')

export function toolPath(name: string): string {
  return path.join(K8S_BIN_DIR, name)
}

export interface ToolCheck {
  available: boolean
  /** Why the suite is skipped; empty when available. */
  reason: string
}

/**
 * Whether the named tools are present. Absent tools skip a suite on a developer machine, but in CI
 * (CI=true) they must have been built, so a missing one is an error.
 */
export function requireTools(names: readonly string[]): ToolCheck {
  const missing = names.filter((n) => !existsSync(toolPath(n)))
  if (missing.length === 0) return { available: true, reason: '' }
  const reason = `missing ${missing.join(', ')} in ${K8S_BIN_DIR} (run \`make test-tools\`)`
  if (process.env.CI === 'true') throw new Error(`CI=true but ${reason}`)
  console.warn(`[test/k8s] skipping the Kubernetes suites: ${reason}`)
  return { available: false, reason }
}

/** How a suite reaches an API server (its own, or the shared one of shared.ts). */
export interface ApiServerConnection {
  /** https://127.0.0.1:<port> */
  url: string
  kubeconfigPath: string
  kubeConfig: KubeConfig
  /** Bearer token of the admin user (system:masters). */
  token: string
}

export interface TestApiServer extends ApiServerConnection {
  stop(): Promise<void>
}

const READY_TIMEOUT_MS = 90_000
const STOP_TIMEOUT_MS = 10_000

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function startProcess(binary: string, args: string[], logPath: string): ChildProcess {
  // Logs go to files in the run directory: they are read back only when start-up fails.
  const fd = openSync(logPath, 'a')
  try {
    return spawn(binary, args, { stdio: ['ignore', fd, fd] })
  } finally {
    closeSync(fd)
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

async function logTail(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return text.split('\n').slice(-30).join('\n')
}

async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  children: ChildProcess[],
  logs: string[],
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null)
    if (dead) break
    if (await probe().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 250))
  }
  const tails = await Promise.all(logs.map(async (l) => `--- ${path.basename(l)}\n${await logTail(l)}`))
  throw new Error(`${what} did not become ready\n${tails.join('\n')}`)
}

/** Starts etcd and kube-apiserver and resolves once /readyz answers ok. */
export async function startApiServer(): Promise<TestApiServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-apiserver-'))
  const children: ChildProcess[] = []
  const cleanup = async () => {
    for (const child of children.reverse()) await stopProcess(child)
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const [etcdClientPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()]
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`
    const etcdLog = path.join(dir, 'etcd.log')
    const apiLog = path.join(dir, 'kube-apiserver.log')

    children.push(
      startProcess(
        toolPath('etcd'),
        [
          `--data-dir=${path.join(dir, 'etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=default=${peerUrl}`,
          // Test data is thrown away: skipping fsync makes writes (and the suite) much faster.
          '--unsafe-no-fsync=true',
          '--log-level=warn',
        ],
        etcdLog,
      ),
    )
    const plainHttp = new Agent()
    await waitUntil(
      'etcd',
      async () => (await request(`${etcdUrl}/health`, { dispatcher: plainHttp })).statusCode === 200,
      children,
      [etcdLog],
    )

    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const saKeyPath = path.join(dir, 'sa.key')
    await writeFile(saKeyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
    const token = randomBytes(24).toString('hex')
    const tokensPath = path.join(dir, 'tokens.csv')
    await writeFile(tokensPath, `${token},admin,admin-uid,"system:masters"\n`, { mode: 0o600 })

    const url = `https://127.0.0.1:${apiPort}`
    children.push(
      startProcess(
        toolPath('kube-apiserver'),
        [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          `--secure-port=${apiPort}`,
          // Without --tls-cert-file the server writes a self-signed serving cert here.
          `--cert-dir=${path.join(dir, 'certs')}`,
          `--service-account-issuer=${url}`,
          `--service-account-key-file=${saKeyPath}`,
          `--service-account-signing-key-file=${saKeyPath}`,
          '--service-cluster-ip-range=10.0.0.0/24',
          `--token-auth-file=${tokensPath}`,
          '--authorization-mode=RBAC',
          // No controller creates default ServiceAccounts here.
          '--disable-admission-plugins=ServiceAccount',
          '--allow-privileged=true',
          '--enable-priority-and-fairness=false',
          '--profiling=false',
        ],
        apiLog,
      ),
    )
    const insecure = new Agent({ connect: { rejectUnauthorized: false } })
    await waitUntil(
      'kube-apiserver',
      async () => {
        const res = await request(`${url}/readyz`, {
          dispatcher: insecure,
          headers: { authorization: `Bearer ${token}` },
        })
        const body = await res.body.text()
        return res.statusCode === 200 && body.trim() === 'ok'
      },
      children,
      [apiLog, etcdLog],
    )
    await insecure.close()
    await plainHttp.close()

    const kubeconfigPath = path.join(dir, 'kubeconfig')
    await writeFile(kubeconfigPath, kubeconfigYaml(url, token), { mode: 0o600 })
    const kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(kubeconfigPath)

    let stopped = false
    return {
      url,
      kubeconfigPath,
      kubeConfig,
      token,
      async stop() {
        if (stopped) return
        stopped = true
        await cleanup()
      },
    }
  } catch (error) {
    await cleanup()
    throw error
  }
}

function kubeconfigYaml(server: string, token: string): string {
  // The serving certificate is self-signed by the throwaway server, hence skip-verify; loopback only.
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${server}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: admin',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: test',
    '  context:',
    '    cluster: test',
    '    user: admin',
    '    namespace: default',
    'current-context: test',
    '',
  ].join('\n')
}
