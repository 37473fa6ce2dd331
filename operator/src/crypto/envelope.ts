/**
 * The envelope format is part of the snapshot contract (gateways open sealed snapshots with the
 * same keyring), so it lives with the contract; the control plane uses it from there.
 */
export { envelopeKeyId, generateEncryptionKey, KeyringError, parseKeyring, type Keyring } from '@gatehouse/gateway/snapshot'
