/**
 * Loads every signer that registers itself for an auth scheme, so that the transport can apply any
 * scheme an adapter declares. A signer module must not be imported by `./index.ts` itself (it
 * imports `registerSigner` from there), hence this separate list.
 */
import './aws-sigv4.ts'
import './azure.ts'
import './google-oauth.ts'
