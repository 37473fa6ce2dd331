import { describe, expect, it } from 'vitest'
import { secretBag } from '../../core/secret.ts'
import './builtin.ts'
import { applyAuth, PUBLIC_NETWORK_ONLY, type SignableRequest } from './index.ts'

describe('built-in signers', () => {
  it('are registered for the azure and google-oauth schemes', async () => {
    const request: SignableRequest = { method: 'POST', url: new URL('https://example.test/x'), headers: {}, body: undefined }
    await applyAuth({ type: 'azure' }, request, secretBag({ apiKey: 'k' }), {}, PUBLIC_NETWORK_ONLY)
    await applyAuth({ type: 'google-oauth' }, request, secretBag({ accessToken: 't' }), {}, PUBLIC_NETWORK_ONLY)
    expect(request.headers).toEqual({ 'api-key': 'k', authorization: 'Bearer t' })
  })
})
