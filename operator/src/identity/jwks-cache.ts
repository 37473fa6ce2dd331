/** The JWKS cache lives with the gateway's snapshot contract: the data plane verifies the same tokens. */
export { JwksCache, JwksUnavailableError, type JwksCacheOptions } from '@gatehouse/gateway/snapshot'
