/** Mistral OCR (`POST /v1/ocr`): the canonical OCR shape is Mistral's, so bodies pass through. */
import type { JsonOperation } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { OcrRequest, OcrResponse } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'

export const mistralOcr: JsonOperation<OcrRequest, OcrResponse> = {
  toUpstream: (request, target) => ({
    upstream: { method: 'POST', path: '/ocr', headers: {}, body: { ...request, model: target.upstreamModel } },
    warnings: [],
  }),
  fromUpstream(body) {
    if (!isRecord(body) || !Array.isArray(body.pages) || !isRecord(body.usage_info)) throw new MalformedResponseError('expected a Mistral OCR response')
    return body as unknown as OcrResponse
  },
  // Mistral bills OCR by the page; there are no tokens to count.
  usage: (response) => ({ inputTokens: 0, outputTokens: 0, pages: response.usage_info.pages_processed }),
}
