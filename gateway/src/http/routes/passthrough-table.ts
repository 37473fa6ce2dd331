/**
 * The OpenAI-shaped API groups Gatehouse forwards without reshaping: one row per method and path.
 * A row says what body the client sends and what kind of answer comes back; the forwarding itself
 * is one mechanism for all of them (`passthrough.ts`). Paths are fastify patterns under `/v1`, and
 * the same path minus `/v1` is what the provider serves below its base URL.
 */
import type { HttpMethod } from '../../providers/adapter.ts'

/** `json`: a JSON object (or nothing); `multipart`: multipart/form-data streamed through, or JSON; `none`: no body. */
export type PassthroughBodyKind = 'json' | 'multipart' | 'none'

/**
 * `json`: relayed as the provider wrote it. `binary`: bytes (audio, file content) streamed with
 * their content type and disposition. `sse`: an event stream when the client asked for one (the
 * provider answers `text/event-stream`), relayed event for event; JSON otherwise.
 */
export type PassthroughResponseKind = 'json' | 'binary' | 'sse'

/** Adapter operations that take precedence over forwarding when a provider has them. */
export type PassthroughOperation = 'rerank' | 'ocr'

export interface PassthroughRoute {
  method: HttpMethod
  path: string
  /** Names the group in errors and logs, e.g. `files`, `vector_stores`. */
  group: string
  body: PassthroughBodyKind
  response: PassthroughResponseKind
  /** Array query parameters with a closed set of values; anything else in them is a 400. */
  queryEnums?: Readonly<Record<string, readonly string[]>>
  /** The path parameter holding a model (`@slug/model` routes by itself, like a body's model). */
  modelParam?: string
  operation?: PassthroughOperation
}

/** The `include` values GET /responses/{response_id} accepts (spec: Endpoints). */
export const RESPONSE_INCLUDE_VALUES = ['file_search_call.results', 'message.input_image.image_url', 'computer_call_output.output.image_url'] as const

type Row = [method: HttpMethod, path: string, body: PassthroughBodyKind, response: PassthroughResponseKind, extra?: Partial<PassthroughRoute>]

function group(name: string, rows: Row[]): PassthroughRoute[] {
  return rows.map(([method, path, body, response, extra]) => ({ method, path: `/v1${path}`, group: name, body, response, ...extra }))
}

export const passthroughRoutes: readonly PassthroughRoute[] = [
  ...group('responses', [
    ['POST', '/responses', 'json', 'sse'],
    ['GET', '/responses/:response_id', 'none', 'sse', { queryEnums: { include: RESPONSE_INCLUDE_VALUES } }],
    ['DELETE', '/responses/:response_id', 'none', 'json'],
    ['POST', '/responses/:response_id/cancel', 'none', 'json'],
    ['GET', '/responses/:response_id/input_items', 'none', 'json'],
  ]),
  ...group('images', [
    ['POST', '/images/generations', 'json', 'sse'],
    ['POST', '/images/edits', 'multipart', 'sse'],
    ['POST', '/images/variations', 'multipart', 'json'],
  ]),
  ...group('audio', [
    ['POST', '/audio/speech', 'json', 'binary'],
    ['POST', '/audio/transcriptions', 'multipart', 'sse'],
    ['POST', '/audio/translations', 'multipart', 'json'],
  ]),
  ...group('files', [
    ['GET', '/files', 'none', 'json'],
    ['POST', '/files', 'multipart', 'json'],
    ['GET', '/files/:file_id', 'none', 'json'],
    ['DELETE', '/files/:file_id', 'none', 'json'],
    ['GET', '/files/:file_id/content', 'none', 'binary'],
  ]),
  ...group('batches', [
    ['POST', '/batches', 'json', 'json'],
    ['GET', '/batches', 'none', 'json'],
    ['GET', '/batches/:batch_id', 'none', 'json'],
    ['POST', '/batches/:batch_id/cancel', 'none', 'json'],
  ]),
  ...group('fine_tuning', [
    ['POST', '/fine_tuning/jobs', 'json', 'json'],
    ['GET', '/fine_tuning/jobs', 'none', 'json'],
    ['GET', '/fine_tuning/jobs/:job_id', 'none', 'json'],
    ['GET', '/fine_tuning/jobs/:job_id/events', 'none', 'json'],
    ['GET', '/fine_tuning/jobs/:job_id/checkpoints', 'none', 'json'],
    ['POST', '/fine_tuning/jobs/:job_id/cancel', 'none', 'json'],
    ['POST', '/fine_tuning/jobs/:job_id/pause', 'none', 'json'],
    ['POST', '/fine_tuning/jobs/:job_id/resume', 'none', 'json'],
  ]),
  ...group('moderations', [['POST', '/moderations', 'json', 'json']]),
  ...group('rerank', [['POST', '/rerank', 'json', 'json', { operation: 'rerank' }]]),
  ...group('ocr', [['POST', '/ocr', 'json', 'json', { operation: 'ocr' }]]),
  ...group('models', [
    ['GET', '/models/:model', 'none', 'json', { modelParam: 'model' }],
    ['DELETE', '/models/:model', 'none', 'json', { modelParam: 'model' }],
  ]),
  ...group('vector_stores', [
    ['GET', '/vector_stores', 'none', 'json'],
    ['POST', '/vector_stores', 'json', 'json'],
    ['GET', '/vector_stores/:vector_store_id', 'none', 'json'],
    ['POST', '/vector_stores/:vector_store_id', 'json', 'json'],
    ['DELETE', '/vector_stores/:vector_store_id', 'none', 'json'],
    ['POST', '/vector_stores/:vector_store_id/search', 'json', 'json'],
    ['GET', '/vector_stores/:vector_store_id/files', 'none', 'json'],
    ['POST', '/vector_stores/:vector_store_id/files', 'json', 'json'],
    ['GET', '/vector_stores/:vector_store_id/files/:file_id', 'none', 'json'],
    ['POST', '/vector_stores/:vector_store_id/files/:file_id', 'json', 'json'],
    ['DELETE', '/vector_stores/:vector_store_id/files/:file_id', 'none', 'json'],
    ['GET', '/vector_stores/:vector_store_id/files/:file_id/content', 'none', 'json'],
    ['POST', '/vector_stores/:vector_store_id/file_batches', 'json', 'json'],
    ['GET', '/vector_stores/:vector_store_id/file_batches/:batch_id', 'none', 'json'],
    ['POST', '/vector_stores/:vector_store_id/file_batches/:batch_id/cancel', 'none', 'json'],
    ['GET', '/vector_stores/:vector_store_id/file_batches/:batch_id/files', 'none', 'json'],
  ]),
  ...group('assistants', [
    ['GET', '/assistants', 'none', 'json'],
    ['POST', '/assistants', 'json', 'json'],
    ['GET', '/assistants/:assistant_id', 'none', 'json'],
    ['POST', '/assistants/:assistant_id', 'json', 'json'],
    ['DELETE', '/assistants/:assistant_id', 'none', 'json'],
  ]),
  ...group('threads', [
    ['POST', '/threads', 'json', 'json'],
    ['POST', '/threads/runs', 'json', 'sse'],
    ['GET', '/threads/:thread_id', 'none', 'json'],
    ['POST', '/threads/:thread_id', 'json', 'json'],
    ['DELETE', '/threads/:thread_id', 'none', 'json'],
    ['GET', '/threads/:thread_id/messages', 'none', 'json'],
    ['POST', '/threads/:thread_id/messages', 'json', 'json'],
    ['GET', '/threads/:thread_id/messages/:message_id', 'none', 'json'],
    ['POST', '/threads/:thread_id/messages/:message_id', 'json', 'json'],
    ['DELETE', '/threads/:thread_id/messages/:message_id', 'none', 'json'],
    ['GET', '/threads/:thread_id/runs', 'none', 'json'],
    ['POST', '/threads/:thread_id/runs', 'json', 'sse'],
    ['GET', '/threads/:thread_id/runs/:run_id', 'none', 'json'],
    ['POST', '/threads/:thread_id/runs/:run_id', 'json', 'json'],
    ['POST', '/threads/:thread_id/runs/:run_id/submit_tool_outputs', 'json', 'sse'],
    ['POST', '/threads/:thread_id/runs/:run_id/cancel', 'none', 'json'],
    ['GET', '/threads/:thread_id/runs/:run_id/steps', 'none', 'json'],
    ['GET', '/threads/:thread_id/runs/:run_id/steps/:step_id', 'none', 'json'],
  ]),
]
