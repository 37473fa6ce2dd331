/**
 * Which limits apply to a request: the matching lives with the snapshot contract
 * (snapshot/limit-match.ts), because the control plane's usage alerts match usage records the same
 * way; the limits stage imports it from here.
 */
export { matchLimits, type LimitSubject, type MatchedLimit } from '../snapshot/limit-match.ts'
