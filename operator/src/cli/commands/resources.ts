/**
 * `gatehouse get KIND [NAME]` and `gatehouse describe KIND NAME` for workspaces, providers, configs
 * and policies, read through the admin API (so they work against any Gatehouse the key reaches).
 */
import { parseArgs } from 'node:util'
import { adminCall, clientSettings, CliError, type ClientSettings } from './admin-client.ts'
import type { CommandIo } from './io.ts'
import { outputFormat, render } from './output.ts'

interface Kind {
  /** Collection paths; policies come from two. */
  paths: readonly string[]
  columns: readonly string[]
  /** The item path for one name (slug or id). */
  item(name: string): readonly string[]
}

const enc = encodeURIComponent
const KINDS: Record<string, Kind> = {
  workspaces: { paths: ['/v1/admin/workspaces'], columns: ['slug', 'name', 'status', 'managed_by'], item: (name) => [`/v1/admin/workspaces/${enc(name)}`] },
  providers: { paths: ['/v1/providers'], columns: ['slug', 'name', 'provider', 'workspace_id', 'status', 'managed_by'], item: (name) => [`/v1/providers/${enc(name)}`] },
  configs: { paths: ['/v1/configs'], columns: ['slug', 'name', 'workspace_id', 'is_default', 'status', 'managed_by'], item: (name) => [`/v1/configs/${enc(name)}`] },
  policies: {
    paths: ['/v1/policies/rate-limits', '/v1/policies/usage-limits'],
    columns: ['id', 'name', 'object', 'type', 'workspace_id', 'status'],
    item: (name) => [`/v1/policies/rate-limits/${enc(name)}`, `/v1/policies/usage-limits/${enc(name)}`],
  },
}
const ALIASES: Record<string, string> = { workspace: 'workspaces', ws: 'workspaces', provider: 'providers', config: 'configs', policy: 'policies' }

function kindOf(name: string | undefined): [string, Kind] {
  const canonical = name === undefined ? undefined : ALIASES[name] ?? name
  const kind = canonical === undefined ? undefined : KINDS[canonical]
  if (!kind) throw new CliError(`name a kind: ${Object.keys(KINDS).join(', ')}`, 2)
  return [canonical!, kind]
}

/** The admin API's largest page. */
const PAGE_SIZE = 100

/** Every item of a collection, page after page. */
export async function listAll(settings: ClientSettings, path: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = []
  const separator = path.includes('?') ? '&' : '?'
  for (let page = 0; ; page += 1) {
    const answer = await adminCall(settings, 'GET', `${path}${separator}page_size=${PAGE_SIZE}&current_page=${page}`)
    const data = (answer.data as Array<Record<string, unknown>> | undefined) ?? []
    items.push(...data)
    if (data.length < PAGE_SIZE || items.length >= Number(answer.total ?? 0)) return items
  }
}

async function list(settings: ClientSettings, kind: Kind): Promise<Array<Record<string, unknown>>> {
  return (await Promise.all(kind.paths.map((path) => listAll(settings, path)))).flat()
}

/** One object by name; for policies the first collection that has it. */
async function one(settings: ClientSettings, kindName: string, kind: Kind, name: string): Promise<Record<string, unknown>> {
  for (const path of kind.item(name)) {
    try {
      const answer = await adminCall(settings, 'GET', path)
      // Configs answer in the reference's envelope, {success, data}.
      return answer.success === true && typeof answer.data === 'object' && answer.data !== null && !Array.isArray(answer.data)
        ? (answer.data as Record<string, unknown>)
        : answer
    } catch (error) {
      if (!(error instanceof CliError) || !/: 404 /.test(error.message)) throw error
    }
  }
  throw new CliError(`no ${kindName.replace(/s$/, '').replace(/ie$/, 'y')} named '${name}'`)
}

function flags(argv: string[]) {
  return parseArgs({
    args: argv,
    options: { output: { type: 'string', short: 'o' }, url: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  })
}

export async function runGet(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = flags(argv)
  const [kindName, kind] = kindOf(positionals[0])
  const format = outputFormat(values.output)
  const settings = await clientSettings(values, io.env)
  if (positionals[1] !== undefined) {
    const item = await one(settings, kindName, kind, positionals[1])
    io.stdout(render(format, item, [item], kind.columns))
    return 0
  }
  const items = await list(settings, kind)
  io.stdout(render(format, { object: 'list', total: items.length, data: items }, items, kind.columns))
  return 0
}

/** Every field of one object, one per line (nested values as JSON); `-o json` prints it whole. */
export async function runDescribe(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = flags(argv)
  const [kindName, kind] = kindOf(positionals[0])
  const name = positionals[1]
  if (name === undefined) throw new CliError(`usage: gatehouse describe ${kindName} NAME`, 2)
  const format = outputFormat(values.output)
  const item = await one(await clientSettings(values, io.env), kindName, kind, name)
  if (format === 'json') {
    io.stdout(`${JSON.stringify(item, null, 2)}\n`)
    return 0
  }
  const width = Math.max(...Object.keys(item).map((key) => key.length))
  const lines = Object.entries(item).map(([key, value]) => `${`${key}:`.padEnd(width + 2)}${typeof value === 'string' ? value : JSON.stringify(value)}`)
  io.stdout(`${lines.join('\n')}\n`)
  return 0
}
