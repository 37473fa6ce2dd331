/** Test helpers: compile one check by id and run it on a made-up input. */
import { Agent } from '../../core/undici.ts'
import type { CheckInput, CheckOutcome, CompiledCheck } from './check.ts'
import { CHECKS } from './index.ts'

export const loopbackDispatcher = new Agent()

export function compileCheck(id: string, parameters: Record<string, unknown>): CompiledCheck {
  const definition = CHECKS.get(id)
  if (!definition) throw new Error(`no check ${id}`)
  return definition.compile(definition.parameters.parse(parameters), { dispatcher: loopbackDispatcher })
}

/** The parameters after defaults, or the first issue's message. */
export function parametersOf(id: string, parameters: Record<string, unknown>): Record<string, unknown> | string {
  const parsed = CHECKS.get(id)!.parameters.safeParse(parameters)
  return parsed.success ? (parsed.data as Record<string, unknown>) : `${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`
}

export function input(overrides: Partial<CheckInput> = {}): CheckInput {
  return {
    hook: 'afterRequestHook',
    text: '',
    body: null,
    metadata: {},
    endpointType: 'chatComplete',
    model: null,
    providerKind: null,
    signal: new AbortController().signal,
    ...overrides,
  }
}

export async function runCheck(id: string, parameters: Record<string, unknown>, overrides: Partial<CheckInput> = {}): Promise<CheckOutcome> {
  return compileCheck(id, parameters).run(input(overrides))
}
