/** The Gemini `generateContent` wire format (Gemini API v1beta and Vertex AI v1 share it). */

export interface GeminiPart {
  text?: string
  /** True on a thought summary part (thinking models with `includeThoughts`). */
  thought?: boolean
  /** Opaque token the model needs back on the part it came with to continue its reasoning. */
  thoughtSignature?: string
  inlineData?: { mimeType: string; data: string }
  fileData?: { mimeType?: string; fileUri: string }
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> }
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> }
}

export interface GeminiContent {
  role?: 'user' | 'model'
  parts: GeminiPart[]
}

export interface GeminiSchema {
  [key: string]: unknown
}

export interface GeminiFunctionDeclaration {
  name: string
  description?: string
  parameters?: GeminiSchema
}

export interface GeminiGenerationConfig {
  temperature?: number
  topP?: number
  topK?: number
  maxOutputTokens?: number
  stopSequences?: string[]
  candidateCount?: number
  seed?: number
  presencePenalty?: number
  frequencyPenalty?: number
  responseMimeType?: string
  responseSchema?: GeminiSchema
  responseLogprobs?: boolean
  logprobs?: number
  thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean }
}

export interface GeminiRequest {
  contents: GeminiContent[]
  systemInstruction?: GeminiContent
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } }
  generationConfig?: GeminiGenerationConfig
  /** `[{ category, threshold }]`, passed through as the client wrote them. */
  safetySettings?: unknown[]
}

export interface GeminiLogprobCandidate {
  token?: string
  tokenId?: number
  logProbability?: number
}

export interface GeminiCandidate {
  index?: number
  content?: GeminiContent
  finishReason?: string
  logprobsResult?: {
    topCandidates?: Array<{ candidates?: GeminiLogprobCandidate[] }>
    chosenCandidates?: GeminiLogprobCandidate[]
  }
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number
  candidatesTokenCount?: number
  cachedContentTokenCount?: number
  thoughtsTokenCount?: number
  toolUsePromptTokenCount?: number
  totalTokenCount?: number
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[]
  promptFeedback?: { blockReason?: string }
  usageMetadata?: GeminiUsageMetadata
  modelVersion?: string
  responseId?: string
  /** Vertex AI only: when the response was created (RFC 3339). */
  createTime?: string
}
