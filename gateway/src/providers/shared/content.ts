/** Reading OpenAI message content the same way in every adapter. */
import type { ChatMessage, ContentPart } from '../canonical.ts'

/** The text of a message's content: a string as is, text parts joined, other parts ignored. */
export function textOfContent(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((part): part is Extract<ContentPart, { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('')
}

/** Whether the content carries anything besides text (images, audio, files). */
export function hasNonTextParts(content: ChatMessage['content']): boolean {
  return Array.isArray(content) && content.some((part) => part.type !== 'text')
}
