/** Calls a running Gatehouse's admin API over HTTP with one key; JSON in, status and JSON out. */
export type AdminCall = (path: string, method: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>

export function adminClient(baseUrl: () => string, key: string): AdminCall {
  return async (path, method, body) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
  }
}
