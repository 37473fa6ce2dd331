/**
 * What the simulated model answers, in provider-neutral terms: thinking, text and tool-call
 * blocks, a finish reason and token counts. Each wire module maps its request onto a
 * `ReplyRequest` and renders the `Reply` in its own shapes, so every provider behaves alike.
 *
 * Behaviour: a tool is called when `toolMode` forces it, or when it is `auto`, the prompt mentions
 * the weather and the conversation does not already end with a tool result. Otherwise the answer
 * is the deterministic echo from `content.ts`, cut by `maxTokens` or a stop sequence.
 */
import type { SimulatorOptions } from './base.ts'
import { applyStop, estimateTokens, generateAnswer, jsonAnswer, placesIn, toolArguments, wantsTool } from './content.ts'

export interface ToolSpec {
  name: string
  /** JSON schema of the arguments. */
  schema: unknown
}

/** `required`: some tool must be called (OpenAI `required`, Anthropic `any`); `{ name }`: that one. */
export type ToolMode = 'none' | 'auto' | 'required' | { name: string }

export interface ReplyRequest {
  /** Text of the last user message. */
  prompt: string
  /** Characters of the whole prompt (system and every message), for the prompt token count. */
  promptCharacters: number
  tools: ToolSpec[]
  toolMode: ToolMode
  /** The conversation ends with a tool result: the model answers in text unless forced. */
  afterToolResult: boolean
  maxTokens?: number | null
  stop: readonly string[]
  /** Emit a thinking block first (Anthropic `thinking`, Bedrock reasoning, Gemini thoughts). */
  thinking: boolean
  /** Say one sentence before an unforced tool call, as Claude does. */
  preambleBeforeTool: boolean
  /**
   * The provider may call several tools at once (OpenAI `parallel_tool_calls`, Anthropic without
   * `disable_parallel_tool_use`): a prompt naming several places gets one call per place.
   */
  parallelToolCalls: boolean
  /** JSON mode (OpenAI `response_format`, Gemini `responseMimeType`): answer JSON, filling `schema` when given. */
  json?: { schema?: unknown }
}

export type ReplyBlock =
  | { type: 'thinking'; pieces: string[]; signature: string }
  | { type: 'text'; pieces: string[] }
  | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown>; arguments: string }

export type ReplyFinish = 'stop' | 'length' | 'tool_calls' | 'stop_sequence'

export interface Reply {
  blocks: ReplyBlock[]
  finish: ReplyFinish
  stopSequence: string | null
  promptTokens: number
  /** Every output token, thinking included. */
  outputTokens: number
  /** The thinking part of `outputTokens`. */
  thinkingTokens: number
}

const maxParallelCalls = 4

export interface ReplyIds {
  toolCallId: string
  signature: string
}

function pickTool(request: ReplyRequest): ToolSpec | null {
  const { tools, toolMode } = request
  if (tools.length === 0 || toolMode === 'none') return null
  if (typeof toolMode === 'object') return tools.find((tool) => tool.name === toolMode.name) ?? null
  const preferred = tools.find((tool) => /weather/i.test(tool.name)) ?? tools[0]!
  if (toolMode === 'required') return preferred
  return !request.afterToolResult && wantsTool(request.prompt) ? preferred : null
}

export function planReply(request: ReplyRequest, options: SimulatorOptions, ids: ReplyIds): Reply {
  const blocks: ReplyBlock[] = []
  let outputTokens = 0
  let thinkingTokens = 0
  if (request.thinking) {
    const pieces = ['Considering', ' the', ' request:', ` ${request.prompt.slice(0, 32)}`]
    blocks.push({ type: 'thinking', pieces, signature: ids.signature })
    thinkingTokens = pieces.length
    outputTokens += thinkingTokens
  }
  const promptTokens = Math.max(1, Math.ceil(request.promptCharacters / 4))
  const tool = pickTool(request)
  if (tool) {
    if (request.preambleBeforeTool && request.toolMode === 'auto') {
      blocks.push({ type: 'text', pieces: [`I'll call ${tool.name}.`] })
      outputTokens += 1
    }
    const places = placesIn(request.prompt)
    const calls = request.parallelToolCalls && places.length > 1 ? places.slice(0, maxParallelCalls) : [places[0]]
    calls.forEach((place, index) => {
      const input = toolArguments(tool.schema, request.prompt, place)
      const json = JSON.stringify(input)
      blocks.push({ type: 'tool_call', id: index === 0 ? ids.toolCallId : `${ids.toolCallId}_${index}`, name: tool.name, input, arguments: json })
      outputTokens += estimateTokens(tool.name + json)
    })
    return { blocks, finish: 'tool_calls', stopSequence: null, promptTokens, outputTokens, thinkingTokens }
  }
  const fixedText = request.json ? jsonAnswer(request.prompt, request.json.schema) : undefined
  const { answer, stopSequence } = applyStop(generateAnswer(request.prompt, options, request.maxTokens, fixedText), request.stop)
  blocks.push({ type: 'text', pieces: answer.pieces })
  outputTokens += answer.pieces.length
  const finish: ReplyFinish = stopSequence !== null ? 'stop_sequence' : answer.truncated ? 'length' : 'stop'
  return { blocks, finish, stopSequence, promptTokens, outputTokens, thinkingTokens }
}

export function sequenceId(prefix: string, sequence: number): string {
  return `${prefix}${String(sequence).padStart(8, '0')}`
}
