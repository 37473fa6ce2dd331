/** Finish reasons: a provider's own word mapped through its table to the unified and OpenAI terms. */
import type { FinishReason, OpenAIFinishReason, UnifiedFinishReason } from '../canonical.ts'

export type FinishReasonTable = Readonly<Record<string, UnifiedFinishReason>>

export function finishReasonFromTable(table: FinishReasonTable, raw: string | null | undefined): FinishReason {
  if (!raw) return { unified: 'other' }
  return { unified: table[raw] ?? 'other', raw }
}

/**
 * OpenAI has no word for "error" or "other": a generation that ended for a reason OpenAI cannot
 * express still ended, and `stop` is what clients treat as a normal end.
 */
export function toOpenAIFinishReason(reason: FinishReason): OpenAIFinishReason {
  return reason.unified === 'error' || reason.unified === 'other' ? 'stop' : reason.unified
}
