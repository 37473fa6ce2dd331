/**
 * What the control plane needs of the gateway's outbound machinery to reach MCP servers and agent
 * cards the way the data plane does: the SSRF-checked fetch and the upstream credentials.
 * (`@gatehouse/gateway/outbound`.)
 */
export { ssrfSafeFetch, type FetchFunction } from '../upstream/ssrf-fetch.ts'
export { McpUpstreamAuth, type McpUpstreamAuthOptions } from './upstream-auth.ts'
