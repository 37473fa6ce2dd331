/**
 * `gatehouse keys create|list|rotate|revoke` over the admin API, and `gatehouse admin-key`, which
 * prints a new admin key in Gatehouse's format for GATEHOUSE_ADMIN_API_KEY (the control plane
 * stores it hashed at its first start with that variable set).
 */
import { parseArgs } from 'node:util'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { adminCall, clientSettings, CliError } from './admin-client.ts'
import type { CommandIo } from './io.ts'
import { outputFormat, render } from './output.ts'
import { listAll } from './resources.ts'

const KEY_COLUMNS = ['id', 'name', 'type', 'workspace_id', 'status', 'key', 'expires_at'] as const

export function runAdminKey(_argv: string[], io: CommandIo): number {
  io.stdout(`${generateApiKey('admin')}\n`)
  return 0
}

function keyFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      output: { type: 'string', short: 'o' },
      url: { type: 'string' },
      workspace: { type: 'string', short: 'w' },
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      type: { type: 'string', default: 'workspace' },
      subtype: { type: 'string', default: 'service' },
      'user-id': { type: 'string' },
      'transition-ms': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  })
}

export async function runKeys(argv: string[], io: CommandIo): Promise<number> {
  const [action, ...rest] = argv
  const { values, positionals } = keyFlags(rest)
  const format = outputFormat(values.output)
  const settings = await clientSettings(values, io.env)
  const idArgument = (): string => {
    const id = positionals[0]
    if (id === undefined) throw new CliError(`usage: gatehouse keys ${action} KEY_ID`, 2)
    return encodeURIComponent(id)
  }
  switch (action) {
    case 'create': {
      if (!values.name) throw new CliError('keys create needs --name', 2)
      if (values.type === 'workspace' && !values.workspace) throw new CliError('a workspace key needs --workspace', 2)
      const body = {
        name: values.name,
        ...(values.workspace ? { workspace_id: values.workspace } : {}),
        ...(values.scope ? { scopes: values.scope } : {}),
        ...(values['user-id'] ? { user_id: values['user-id'] } : {}),
      }
      const created = await adminCall(settings, 'POST', `/v1/api-keys/${encodeURIComponent(values.type)}/${encodeURIComponent(values.subtype)}`, body)
      // The raw key is shown this once; in table form it is alone on stdout so scripts can capture it.
      io.stdout(format === 'json' ? `${JSON.stringify(created, null, 2)}\n` : `${String(created.key)}\n`)
      if (format === 'table') io.stderr(`created key ${String(created.id)} (the secret above is not shown again)\n`)
      return 0
    }
    case 'list': {
      const query = values.workspace ? `?workspace_id=${encodeURIComponent(values.workspace)}` : ''
      const keys = await listAll(settings, `/v1/api-keys${query}`)
      io.stdout(render(format, { object: 'list', total: keys.length, data: keys }, keys, KEY_COLUMNS))
      return 0
    }
    case 'rotate': {
      const transition = values['transition-ms'] === undefined ? {} : { key_transition_period_ms: Number(values['transition-ms']) }
      const rotated = await adminCall(settings, 'POST', `/v1/api-keys/${idArgument()}/rotate`, transition)
      io.stdout(format === 'json' ? `${JSON.stringify(rotated, null, 2)}\n` : `${String(rotated.key)}\n`)
      if (format === 'table') io.stderr(`rotated key ${String(rotated.id)}; the old secret works until ${String(rotated.key_transition_expires_at ?? 'now')}\n`)
      return 0
    }
    case 'revoke': {
      await adminCall(settings, 'DELETE', `/v1/api-keys/${idArgument()}`)
      io.stdout(format === 'json' ? `${JSON.stringify({ id: positionals[0], status: 'revoked' })}\n` : `revoked ${positionals[0]}\n`)
      return 0
    }
    default:
      throw new CliError('usage: gatehouse keys create|list|rotate|revoke', 2)
  }
}
