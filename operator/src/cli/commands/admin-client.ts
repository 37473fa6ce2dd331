/**
 * How the operator commands (`keys`, `get`, `describe`) reach the admin API: the base URL and
 * admin key come from flags, then the environment (GATEHOUSE_URL, GATEHOUSE_ADMIN_API_KEY), then a
 * config file (GATEHOUSE_CONFIG, default ~/.config/gatehouse/config.json: {"url", "adminKey"}).
 * The key never travels on the command line unless the user puts it there.
 */
import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'

export interface ClientSettings {
  url: string
  adminKey: string
}

export class CliError extends Error {
  /** Exit status: 1 the request failed, 2 the command line or settings are wrong. */
  readonly exitCode: number
  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

export function defaultConfigPath(env: NodeJS.ProcessEnv): string {
  return env.GATEHOUSE_CONFIG ?? join(env.HOME ?? homedir(), '.config', 'gatehouse', 'config.json')
}

async function readConfigFile(path: string): Promise<Partial<ClientSettings>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new CliError(`cannot read the config file ${path}: ${(error as Error).message}`, 2)
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>
    return {
      ...(typeof parsed.url === 'string' ? { url: parsed.url } : {}),
      ...(typeof parsed.adminKey === 'string' ? { adminKey: parsed.adminKey } : {}),
    }
  } catch {
    throw new CliError(`the config file ${path} is not JSON ({"url": "...", "adminKey": "..."})`, 2)
  }
}

export async function clientSettings(flags: { url?: string | undefined }, env: NodeJS.ProcessEnv): Promise<ClientSettings> {
  const file = await readConfigFile(defaultConfigPath(env))
  // An empty variable counts as unset.
  const url = flags.url || env.GATEHOUSE_URL || file.url || 'http://127.0.0.1:8787'
  const adminKey = env.GATEHOUSE_ADMIN_API_KEY || file.adminKey
  if (!adminKey) {
    throw new CliError(`no admin key: set GATEHOUSE_ADMIN_API_KEY or put {"adminKey": "..."} in ${defaultConfigPath(env)}`, 2)
  }
  return { url: url.replace(/\/+$/, ''), adminKey }
}

/** One admin API call; a refusal becomes a CliError carrying the API's own message. */
export async function adminCall(settings: ClientSettings, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  let response: Response
  try {
    response = await fetch(`${settings.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': settings.adminKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    })
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message
    throw new CliError(`cannot reach Gatehouse at ${settings.url} (${cause}); set --url or GATEHOUSE_URL`)
  }
  const text = await response.text()
  let parsed: Record<string, unknown>
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    parsed = { raw: text }
  }
  if (!response.ok) {
    const error = parsed.error as { message?: string } | undefined
    throw new CliError(`${method} ${path}: ${response.status} ${error?.message ?? text.slice(0, 200)}`)
  }
  return parsed
}
