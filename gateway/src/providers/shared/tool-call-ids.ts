/**
 * Some providers (Gemini) return function calls without ids, but OpenAI clients must echo an id
 * back with the tool result. The id is derived from the response id and the call's position so
 * that a streamed and a non-streamed answer name the same call the same way, with no randomness.
 */
export function syntheticToolCallId(responseId: string, callIndex: number, choiceIndex = 0): string {
  return choiceIndex === 0 ? `${responseId}_call_${callIndex}` : `${responseId}_choice_${choiceIndex}_call_${callIndex}`
}
