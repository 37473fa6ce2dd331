/** Request headers as Node and fastify hand them over, and the one way Gatehouse reads them. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>

/** The first value of a header (Node joins most repeated headers; a few arrive as arrays). */
export function header(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}
