/**
 * Rerank <-> Cohere `/v2/rerank`. v2 takes documents as strings: an object's `text` is sent, and
 * any other object is sent as its JSON. v2 returns indexes and scores only, never the documents.
 */
import type { JsonOperation } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { RerankRequest, RerankResponse, RerankResult } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { unhandledFieldWarnings, unsupportedParameter } from '../shared/warnings.ts'

const handledFields = new Set(['model', 'query', 'documents', 'top_n', 'return_documents', 'max_tokens_per_doc'])

function documentText(document: RerankRequest['documents'][number]): string {
  if (typeof document === 'string') return document
  return typeof document.text === 'string' ? document.text : JSON.stringify(document)
}

export const cohereRerank: JsonOperation<RerankRequest, RerankResponse> = {
  toUpstream(request, target) {
    const warnings = unhandledFieldWarnings(request, handledFields, 'Cohere rerank')
    if (request.return_documents) warnings.push(unsupportedParameter('return_documents', 'Cohere v2 rerank returns indexes and scores only; match results to documents by index'))
    const body = {
      model: target.upstreamModel,
      query: request.query,
      documents: request.documents.map(documentText),
      ...(request.top_n != null && { top_n: request.top_n }),
      ...(request.max_tokens_per_doc != null && { max_tokens_per_doc: request.max_tokens_per_doc }),
    }
    return { upstream: { method: 'POST', path: '/v2/rerank', headers: {}, body }, warnings }
  },
  fromUpstream(body, context) {
    if (!isRecord(body) || !Array.isArray(body.results)) throw new MalformedResponseError('expected a Cohere rerank response')
    const results: RerankResult[] = body.results.map((result) => {
      if (!isRecord(result) || typeof result.index !== 'number' || typeof result.relevance_score !== 'number') throw new MalformedResponseError('expected results[].index and relevance_score')
      return { index: result.index, relevance_score: result.relevance_score }
    })
    const billed = isRecord(body.meta) && isRecord(body.meta.billed_units) ? body.meta.billed_units : {}
    return {
      object: 'list',
      id: typeof body.id === 'string' ? body.id : context.responseId,
      model: context.requestModel,
      results,
      usage: typeof billed.search_units === 'number' ? { search_units: billed.search_units } : {},
    }
  },
  usage: (response) => ({ inputTokens: 0, outputTokens: 0, ...(response.usage.search_units !== undefined && { searchUnits: response.usage.search_units }) }),
}
