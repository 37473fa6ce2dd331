/**
 * What MCP servers and agent servers share as servers the gateway relays to: an index of a
 * runtime's servers by workspace and slug (and by id), built once per snapshot; the lookup a
 * request makes in its caller's workspace; the scope check; and the server's user access.
 */
import { GatewayError } from '../core/errors.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'

/** The fields of a served server the shared checks read. */
export interface ServedRecord {
  readonly id: string
  readonly slug: string
  readonly workspaceId: string
  readonly status: 'active' | 'disabled'
  readonly defaultUserAccess: 'allow' | 'deny'
  readonly userAccess: Readonly<Record<string, boolean>>
}

/** One family of served servers (MCP, agents): how to list a runtime's records and compile each once. */
export interface ServedFamily<R extends ServedRecord, C extends { readonly record: R }> {
  /** In error messages: "MCP server", "agent server". */
  readonly what: string
  records(runtime: RuntimeConfig): readonly R[]
  compile(record: R): C
}

/** A family's servers, indexed per runtime (a new snapshot is a new runtime, so a new index). */
export class ServedServers<R extends ServedRecord, C extends { readonly record: R }> {
  readonly #family: ServedFamily<R, C>
  readonly #indexes = new WeakMap<RuntimeConfig, Map<string, C>>()

  constructor(family: ServedFamily<R, C>) {
    this.#family = family
  }

  #indexOf(runtime: RuntimeConfig): Map<string, C> {
    let index = this.#indexes.get(runtime)
    if (!index) {
      index = new Map()
      for (const record of this.#family.records(runtime)) {
        const compiled = this.#family.compile(record)
        index.set(`id:${record.id}`, compiled)
        index.set(`${record.workspaceId}/${record.slug}`, compiled)
      }
      this.#indexes.set(runtime, index)
    }
    return index
  }

  /** The server named by slug or id in the caller's workspace; 404 when there is none (other workspaces' servers included), 503 when disabled. */
  find(runtime: RuntimeConfig, workspaceId: string, reference: string): C {
    const index = this.#indexOf(runtime)
    const server = index.get(`${workspaceId}/${reference}`) ?? index.get(`id:${reference}`)
    const what = this.#family.what
    if (!server || server.record.workspaceId !== workspaceId) throw new GatewayError('not_found', `No ${what} '${reference}' in this workspace`)
    if (server.record.status !== 'active') {
      throw new GatewayError('upstream_unavailable', `The ${what} '${server.record.slug}' is not available (its integration is archived or cannot be served)`, { headers: { 'retry-after': '30' } })
    }
    return server
  }

  /** The server's user access: a user's own override, else the default (service keys have no user). */
  requireUserAccess(server: C, userId: string | null): void {
    const record = server.record
    const override = userId === null ? undefined : record.userAccess[userId]
    const allowed = override ?? record.defaultUserAccess === 'allow'
    if (!allowed) throw new GatewayError('forbidden', `This caller may not use the ${this.#family.what} '${record.slug}'`)
  }
}

/** The caller's key holds `scope` (`mcp.invoke`, `agents.invoke`); else 403 naming it. */
export function requireScope(scopes: readonly string[], scope: string, doing: string): void {
  if (!scopes.includes(scope)) throw new GatewayError('insufficient_scope', `${doing} needs the ${scope} scope`)
}
