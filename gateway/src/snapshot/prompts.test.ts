import { describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { promptTemplateIssues, renderPromptMessages, renderPromptRequest, selectPromptVersion, splitPromptReference, type SnapshotPrompt, type SnapshotPromptVersion } from './prompts.ts'

const none = (): undefined => undefined
const partialsOf = (map: Record<string, string>) => (name: string): string | undefined => map[name]

function refusal(run: () => unknown): GatewayError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError)
    return error as GatewayError
  }
  throw new Error('expected a refusal')
}

const version = (overrides: Partial<SnapshotPromptVersion> = {}): SnapshotPromptVersion => ({
  id: 'v1', version: 1, template: 'Hi {{name}}', parameters: { temperature: 0.2 }, model: 'gpt-4o-mini', tools: null, functions: null, isRawTemplate: false, labels: [], ...overrides,
})

describe('renderPromptMessages', () => {
  it('renders plain text as one user message, without HTML escaping', () => {
    expect(renderPromptMessages('Hi {{name}} & {{{other}}}', { name: '<Ann>', other: '"x"' }, none)).toEqual([{ role: 'user', content: 'Hi <Ann> & "x"' }])
  })

  it('renders each string of a messages array, structure kept', () => {
    const template = JSON.stringify([{ role: 'system', content: 'Be {{tone}}' }, { role: 'user', content: [{ type: 'text', text: 'About {{topic.name}}' }] }])
    expect(renderPromptMessages(template, { tone: 'kind', topic: { name: 'owls' } }, none)).toEqual([
      { role: 'system', content: 'Be kind' }, { role: 'user', content: [{ type: 'text', text: 'About owls' }] },
    ])
  })

  it('names every missing variable, the first as the param; sections are optional', () => {
    const error = refusal(() => renderPromptMessages('{{a}} {{#maybe}}{{inner}}{{/maybe}} {{b.c}} {{d}}', { d: 0, b: {} }, none))
    expect(error.status).toBe(400)
    expect(error.param).toBe('variables.a')
    expect(error.message).toBe('Missing prompt variables: a, b.c')
    // Falsy values count as given; only absent ones are missing.
    expect(renderPromptMessages('{{a}}{{b}}', { a: 0, b: '' }, none)).toEqual([{ role: 'user', content: '0' }])
  })

  it('includes partials by name, checks their variables, and refuses unknown or self-including ones', () => {
    const partials = partialsOf({ tone: 'Speak {{mood}}.', loop: '{{>loop}}' })
    expect(renderPromptMessages('{{>tone}} Go.', { mood: 'softly' }, partials)).toEqual([{ role: 'user', content: 'Speak softly. Go.' }])
    expect(refusal(() => renderPromptMessages('{{>tone}}', {}, partials)).param).toBe('variables.mood')
    expect(refusal(() => renderPromptMessages('{{>nowhere}}', {}, partials)).message).toMatch(/partial 'nowhere'/)
    expect(refusal(() => renderPromptMessages('{{>loop}}', {}, partials)).message).toMatch(/deeper than/)
  })

  it('reports Mustache syntax errors as template issues', () => {
    expect(promptTemplateIssues('{{#a}} open')).toEqual([expect.stringMatching(/Unclosed section "a"/)])
    expect(promptTemplateIssues(JSON.stringify([{ role: 'user', content: '{{/b}}' }]))).toHaveLength(1)
    expect(promptTemplateIssues('fine {{x}}')).toEqual([])
  })
})

describe('renderPromptRequest', () => {
  it('starts from the version and lets every root field but variables override it', () => {
    const request = renderPromptRequest(version({ tools: [{ type: 'function' }], toolChoice: 'auto' }), { variables: { name: 'Bo' }, temperature: 1, stream: true }, none)
    expect(request).toEqual({ model: 'gpt-4o-mini', temperature: 1, stream: true, messages: [{ role: 'user', content: 'Hi Bo' }], tools: [{ type: 'function' }], tool_choice: 'auto' })
  })

  it('refuses variables that are not an object', () => {
    expect(refusal(() => renderPromptRequest(version(), { variables: ['x'] }, none)).param).toBe('variables')
  })

  // Break tried: rendering raw templates through renderPromptMessages (dropping the isRawTemplate
  // branch) fails the first expectation (messages instead of prompt).
  it('renders a raw template to one text prompt, even one that looks like messages, without tools', () => {
    const looksLikeMessages = JSON.stringify([{ role: 'user', content: '{{name}}' }])
    const raw = version({ template: `Q: {{>tone}} ${looksLikeMessages}`, isRawTemplate: true, tools: [{ type: 'function' }], toolChoice: 'auto' })
    const request = renderPromptRequest(raw, { variables: { name: 'Bo', mood: 'calm' }, max_tokens: 5 }, partialsOf({ tone: 'be {{mood}}' }))
    expect(request).toEqual({ model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 5, prompt: `Q: be calm ${JSON.stringify([{ role: 'user', content: 'Bo' }])}` })
  })

  it('a raw template names its missing variables as a chat template does, partials included', () => {
    const raw = version({ template: 'Hi {{name}}, {{>tone}}', isRawTemplate: true })
    const error = refusal(() => renderPromptRequest(raw, { variables: {} }, partialsOf({ tone: '{{mood}}' })))
    expect(error.status).toBe(400)
    expect(error.param).toBe('variables.name')
    expect(error.message).toBe('Missing prompt variables: name, mood')
  })

  it('checks a raw template as one text', () => {
    // As messages, the decoded content `{{#open}}` is Mustache (an unclosed section); as one text, the escapes are plain text.
    const template = '[{"role":"user","content":"\\u007b\\u007b#open\\u007d\\u007d"}]'
    expect(promptTemplateIssues(template)).toEqual([expect.stringMatching(/Unclosed section "open"/)])
    expect(promptTemplateIssues(template, true)).toEqual([])
  })
})

describe('prompt references', () => {
  const prompt: SnapshotPrompt = {
    id: 'p', slug: 'pp-x', name: 'X', workspaceId: 'w', virtualKey: null, defaultVersionId: 'v1',
    versions: [version(), version({ id: 'v3', version: 3, labels: ['staging'] })],
  }
  it('select the published version, a number, or a label', () => {
    expect(splitPromptReference('pp-x@staging')).toEqual({ prompt: 'pp-x', selector: 'staging' })
    expect(selectPromptVersion(prompt, null)?.id).toBe('v1')
    expect(selectPromptVersion(prompt, '3')?.id).toBe('v3')
    expect(selectPromptVersion(prompt, 'staging')?.id).toBe('v3')
    expect(selectPromptVersion(prompt, '2')).toBeUndefined()
    expect(selectPromptVersion(prompt, 'production')).toBeUndefined()
  })
})
