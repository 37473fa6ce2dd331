/**
 * `default.addPrefix`: puts `prefix` in front of the user input before the model sees it. With
 * `applyToRole: user` the last user message (chat, messages) or the prompt (completions) gets it;
 * with `system` the system prompt does (a new one is added when there is none, or when
 * `addToExisting` is false). Always passes: it changes the request, it judges nothing.
 */
import { z } from 'zod'
import { defineCheck, inline } from './check.ts'

type Message = Record<string, unknown>

function prefixContent(content: unknown, prefix: string): unknown {
  if (typeof content === 'string') return prefix + content
  if (Array.isArray(content)) {
    const index = content.findIndex((part) => typeof part === 'object' && part !== null && (part as Message).type === 'text')
    if (index === -1) return [{ type: 'text', text: prefix }, ...content]
    return content.map((part, i) => (i === index ? { ...(part as Message), text: prefix + String((part as Message).text ?? '') } : part))
  }
  return content
}

function withPrefix(body: Readonly<Record<string, unknown>>, prefix: string, role: 'user' | 'system', addToExisting: boolean, anthropic: boolean): Record<string, unknown> | null {
  if (typeof body.prompt === 'string') return { ...body, prompt: prefix + body.prompt }
  if (!Array.isArray(body.messages)) return null
  const messages = body.messages as Message[]
  if (role === 'user') {
    const index = messages.findLastIndex((message) => message.role === 'user')
    if (index === -1) return null
    return { ...body, messages: messages.map((message, i) => (i === index ? { ...message, content: prefixContent(message.content, prefix) } : message)) }
  }
  // Anthropic messages keep the system prompt in `system`, a string or text blocks.
  if (anthropic) {
    if (body.system === undefined) return { ...body, system: prefix }
    if (addToExisting) return { ...body, system: prefixContent(body.system, prefix) }
    const blocks = Array.isArray(body.system) ? body.system : [{ type: 'text', text: String(body.system) }]
    return { ...body, system: [{ type: 'text', text: prefix }, ...blocks] }
  }
  const index = messages.findIndex((message) => message.role === 'system')
  if (index !== -1 && addToExisting) {
    return { ...body, messages: messages.map((message, i) => (i === index ? { ...message, content: prefixContent(message.content, prefix) } : message)) }
  }
  return { ...body, messages: [{ role: 'system', content: prefix }, ...messages] }
}

export const addPrefix = defineCheck({
  id: 'default.addPrefix',
  parameters: z.object({ prefix: z.string().min(1), applyToRole: z.enum(['system', 'user']).default('user'), addToExisting: z.boolean().default(true) }),
  compile({ prefix, applyToRole, addToExisting }) {
    return inline(
      ({ body, hook, endpointType }) => {
        if (hook !== 'beforeRequestHook' || body === null) return { verdict: true, explanation: 'nothing to prefix' }
        const changed = withPrefix(body, prefix, applyToRole, addToExisting, endpointType === 'messages')
        return changed ? { verdict: true, explanation: `prefix added to the ${applyToRole} input`, body: changed } : { verdict: true, explanation: 'no input to prefix' }
      },
      { mutates: true },
    )
  },
})
