/**
 * Guardrails on the request path, as two stage factories around cache and dispatch:
 *
 * - before: the input guardrails attached to the exchange (organisation, workspace, config, each
 *   once) judge the request; mutating checks rewrite the body; a failed denying guardrail answers
 *   446 before any provider is called. On the way back it attaches `hook_results` to JSON answers
 *   and turns 200 into 246 when a non-denying guardrail failed.
 * - after: the output guardrails judge the answer: a JSON answer as a whole (446 replaces it on a
 *   deny), a stream as it arrives (see guardrails/stream.ts), a relayed Responses API stream
 *   decoded into its events and guarded the same way (guardrails/responses-events.ts).
 *
 * Async guardrails (`actions.async`) run after the answer and are only logged. Both stages take
 * part only in textual operations (chat, completions, messages, responses); a snapshot without
 * guardrails costs one property read per request.
 */
import { judge, hookResultsView, GuardrailBlockedError } from '../../guardrails/blocked.ts'
import { compileGuardrails, union, type CompiledGuardrail, type GuardrailRuntime } from '../../guardrails/compile.ts'
import type { GuardrailMetrics } from '../../guardrails/metrics.ts'
import { runAll, type GuardrailRun, type RunInput } from '../../guardrails/run.ts'
import { decodeResponseEvents, encodeResponseEvents, verdictsOnTerminal } from '../../guardrails/responses-events.ts'
import { guardStream, withVerdicts, type GuardedStreamFormat } from '../../guardrails/stream.ts'
import { answerText, requestText } from '../../guardrails/text.ts'
import { GatewayError } from '../../core/errors.ts'
import { chunkValue } from '../../core/raw-json.ts'
import { eventChunks } from '../../core/relayed-events.ts'
import type { PlanNode, ProviderRef } from '../../routing/plan.ts'
import type { RuntimeConfig } from '../../runtime/compile.ts'
import { ssrfSafeDispatcher } from '../../upstream/ssrf.ts'
import { observeStream, type Answer, type Exchange, type HookResult, type Next, type RelayAnswer, type StageFactory } from '../stage.ts'

/** Guardrail references (ids or slugs) a config attaches, for the exchange's route. */
export interface ConfigGuardrails {
  readonly input: readonly string[]
  /** `targetPath`: the target that answered (`config.targets[1]`), when known. */
  output(targetPath: string | null): readonly string[]
}

export interface GuardrailStageOptions {
  /** The compiled guardrails of the snapshot the exchange runs under. */
  guardrailsOf(exchange: Exchange): GuardrailRuntime | null
  /** What the exchange's config attaches; null when no config is in play. */
  configGuardrails?(exchange: Exchange): ConfigGuardrails | null
  metrics?: GuardrailMetrics
  /** Verdicts of async guardrails, known after the answer. */
  onAsyncResults?(exchange: Exchange, results: readonly HookResult[]): void
}

function resolve(runtime: GuardrailRuntime, references: readonly string[], workspaceId: string | null): CompiledGuardrail[] {
  return references.map((reference) => {
    const found = runtime.find(reference, workspaceId)
    if (!found) throw new GatewayError('invalid_parameter', `The config names guardrail '${reference}', which is not available to this workspace`, { param: 'config' })
    return found
  })
}

function baseInput(exchange: Exchange): Omit<RunInput, 'text'> {
  const model = exchange.body?.model
  return {
    body: exchange.body,
    metadata: exchange.context.metadata,
    endpointType: exchange.operation.endpointType,
    model: typeof model === 'string' ? model : exchange.facts.requestedModel,
    providerKind: exchange.facts.provider?.record.kind ?? null,
  }
}

function record(exchange: Exchange, runs: readonly GuardrailRun[], metrics: GuardrailMetrics | undefined): HookResult[] {
  const results = runs.map((run) => run.result)
  exchange.facts.hookResults.push(...results)
  for (const result of results) metrics?.countVerdict(result.hook, result.verdict ? 'passed' : result.deny ? 'denied' : 'flagged')
  return results
}

/** Starts async guardrails once the answer is on its way; their verdicts are only reported. */
function runDetached(exchange: Exchange, guardrails: readonly CompiledGuardrail[], hook: HookResult['hook'], input: RunInput, options: GuardrailStageOptions): void {
  if (guardrails.length === 0) return
  // Not tied to the client's signal: the client leaving must not cancel the audit.
  void Promise.resolve(runAll(guardrails, hook, input, new AbortController().signal)).then(
    (runs) => options.onAsyncResults?.(exchange, runs.map((run) => run.result)),
    () => undefined,
  )
}

/** A relayed answer whose body is JSON (by its content type). */
function isJsonRelay(answer: { headers: Record<string, string> }): boolean {
  const type = Object.entries(answer.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? ''
  return /^application\/(?:[\w.+-]+\+)?json\b/i.test(type)
}

/** A relayed JSON answer read whole (a created response), parsed for its text and verdicts. */
async function readJsonRelay(answer: RelayAnswer): Promise<{ bytes: Buffer; body: unknown }> {
  const parts: Uint8Array[] = []
  for await (const part of answer.body) parts.push(part)
  const bytes = Buffer.concat(parts)
  try {
    return { bytes, body: JSON.parse(bytes.toString('utf8')) }
  } catch {
    throw new GatewayError('upstream_error', 'The provider\'s answer is not the JSON it declared, so its guardrails cannot judge it')
  }
}

/** A relayed answer with these bytes as its body; a changed body drops the provider's length. */
function relayBytes(answer: RelayAnswer, bytes: Buffer, changed: boolean): RelayAnswer {
  const headers = changed ? Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.toLowerCase() !== 'content-length')) : answer.headers
  return { ...answer, headers, body: (async function* () { yield bytes })() }
}

function split(guardrails: readonly CompiledGuardrail[]): { blocking: CompiledGuardrail[]; detached: CompiledGuardrail[] } {
  return { blocking: guardrails.filter((g) => !g.async), detached: guardrails.filter((g) => g.async) }
}

/** Attaches verdicts to a passed answer: `hook_results` on JSON bodies, 246 when one was flagged. */
async function attachResults(exchange: Exchange, answer: Answer): Promise<Answer> {
  const shown = exchange.facts.hookResults.filter((result) => !result.async)
  if (shown.length === 0) return answer
  const { flagged } = judge(shown)
  if (answer.kind === 'json') {
    if (answer.status < 200 || answer.status > 299) return answer
    // A cache hit's body is the stored JSON text (RawJson): parse it, or its wrapper would be spread.
    const body = chunkValue(answer.body)
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) answer.body = { ...(body as Record<string, unknown>), hook_results: hookResultsView(shown) }
    if (flagged && answer.status === 200) answer.status = 246
  } else if (answer.kind === 'stream') {
    if (flagged && answer.status === 200) answer.status = 246
    // The output stage ends the stream with the verdicts; without it, this stage does.
    let first: unknown = undefined
    observeStream(answer, {
      onBatch: (batch) => {
        if (first === undefined) first = eventChunks(batch)[0]
        return batch
      },
      flush: () => (exchange.facts.annotations.guardrailStream === undefined ? withVerdicts(exchange.operation.format, [], first, exchange.facts.hookResults) : []),
    })
  } else if (answer.kind === 'relay' && answer.status >= 200 && answer.status <= 299) {
    // A created response (the Responses API), relayed: its JSON or its event stream carries the verdicts too.
    if (flagged && answer.status === 200) answer.status = 246
    if (answer.eventStream) {
      // Output guardrails that read the stream attach them themselves.
      if (exchange.facts.annotations.guardrailStream !== undefined) return answer
      return { ...answer, body: encodeResponseEvents(verdictsOnTerminal(decodeResponseEvents(answer.body), exchange.facts.hookResults)) }
    }
    if (!isJsonRelay(answer)) return answer
    const { bytes, body } = await readJsonRelay(answer)
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return relayBytes(answer, bytes, false)
    return relayBytes(answer, Buffer.from(JSON.stringify({ ...body, hook_results: hookResultsView(shown) })), true)
  }
  return answer
}

export function guardrailStages(options: GuardrailStageOptions): { before: StageFactory; after: StageFactory } {
  const before: StageFactory = {
    name: 'guardrails-before',
    forOperation(operation) {
      if (!operation.textual) return null
      return {
        name: 'guardrails-before',
        run(exchange, next) {
          const runtime = options.guardrailsOf(exchange)
          // No guardrails: the exchange passes on without an async frame of this stage's (the plain path).
          if (!runtime || runtime.empty) return next()
          return guardInput(exchange, runtime, next)
        },
      }
    },
  }

  /** The input guardrails attached to the exchange, around the rest of the pipeline. */
  const guardInput = async (exchange: Exchange, runtime: GuardrailRuntime, next: Next): Promise<Answer> => {
    const workspaceId = exchange.context.workspaceId
    const config = options.configGuardrails?.(exchange) ?? null
    const attached = union(runtime.defaults(workspaceId).input, config ? resolve(runtime, config.input, workspaceId) : [])
    if (attached.length > 0) {
      const { blocking, detached } = split(attached)
      const input = { ...baseInput(exchange), text: requestText(exchange.body) }
      const runs = await runAll(blocking, 'beforeRequestHook', input, exchange.context.signal)
      const results = record(exchange, runs, options.metrics)
      if (judge(results).denied) throw new GuardrailBlockedError(exchange.facts.hookResults, 'beforeRequestHook')
      const last = runs.at(-1)
      if (last && last.body !== exchange.body) exchange.body = last.body as Record<string, unknown> | null
      const answer = await next()
      runDetached(exchange, detached, 'beforeRequestHook', input, options)
      return attachResults(exchange, answer)
    }
    return attachResults(exchange, await next())
  }

  const after: StageFactory = {
    name: 'guardrails-after',
    forOperation(operation) {
      if (!operation.textual) return null
      return {
        name: 'guardrails-after',
        run(exchange, next) {
          const runtime = options.guardrailsOf(exchange)
          if (!runtime || runtime.empty) return next()
          return guardOutput(exchange, runtime, next)
        },
      }
    },
  }

  /** The output guardrails attached to the answering target, on the answer (a stream as it passes). */
  const guardOutput = async (exchange: Exchange, runtime: GuardrailRuntime, next: Next): Promise<Answer> => {
    const workspaceId = exchange.context.workspaceId
    const config = options.configGuardrails?.(exchange) ?? null
    const requestInput = baseInput(exchange)
    const answer = await next()
    const references = config ? config.output(exchange.facts.targetPath) : []
    const attached = union(runtime.defaults(workspaceId).output, resolve(runtime, references, workspaceId))
    if (attached.length === 0 || answer.status < 200 || answer.status > 299) return answer
    const { blocking, detached } = split(attached)
    if (answer.kind === 'json') {
      const input = { ...requestInput, text: answerText(answer.body) }
      const results = record(exchange, await runAll(blocking, 'afterRequestHook', input, exchange.context.signal), options.metrics)
      if (judge(results).denied) throw new GuardrailBlockedError(exchange.facts.hookResults, 'afterRequestHook')
      runDetached(exchange, detached, 'afterRequestHook', input, options)
      return answer
    }
    if (answer.kind === 'relay' && !answer.eventStream && isJsonRelay(answer)) {
      // A passthrough JSON answer (a created response): read it whole and judge its text (the input stage attaches the verdicts).
      const { bytes, body } = await readJsonRelay(answer)
      const input = { ...requestInput, text: answerText(body) }
      const results = record(exchange, await runAll(blocking, 'afterRequestHook', input, exchange.context.signal), options.metrics)
      if (judge(results).denied) throw new GuardrailBlockedError(exchange.facts.hookResults, 'afterRequestHook')
      runDetached(exchange, detached, 'afterRequestHook', input, options)
      return relayBytes(answer, bytes, false)
    }
    const guard = (batches: AsyncIterable<readonly unknown[]>, format: GuardedStreamFormat) =>
      guardStream(batches, {
        facts: exchange.facts,
        format,
        guardrails: blocking,
        input: requestInput,
        signal: exchange.context.signal,
        ...(options.metrics ? { metrics: options.metrics } : {}),
        onPassed: (text) => runDetached(exchange, detached, 'afterRequestHook', { ...requestInput, text }, options),
      })
    if (answer.kind === 'stream') answer.batches = guard(answer.batches, exchange.operation.format)
    // A Responses API stream, relayed as the provider's events: decoded, guarded, written back event for event.
    if (answer.kind === 'relay' && answer.eventStream) return { ...answer, body: encodeResponseEvents(guard(decodeResponseEvents(answer.body), 'responses')) }
    return answer
  }
  return { before, after }
}

export interface GuardrailFeatureOptions {
  /** Lets webhook, partner and image-fetching checks reach private and loopback addresses (in-cluster services). */
  allowPrivateNetwork?: boolean
  metrics?: GuardrailMetrics
  onAsyncResults?(exchange: Exchange, results: readonly HookResult[]): void
  /** Checks the gateway cannot run (they fail on every request); told once per snapshot. */
  onProblems?(problems: ReadonlyArray<{ path: string; message: string }>): void
}

/** Every node's guardrails of a config plan: input ones all run before dispatch, output ones per answering target. */
function planGuardrails(plan: PlanNode<ProviderRef>): ConfigGuardrails {
  const byPath = new Map<string, PlanNode<ProviderRef>>()
  const visit = (node: PlanNode<ProviderRef>): void => {
    byPath.set(node.path, node)
    if (node.kind === 'group') node.children.forEach(visit)
  }
  visit(plan)
  const input = [...new Set([...byPath.values()].flatMap((node) => node.guardrails.input))]
  return { input, output: (targetPath) => (targetPath !== null ? byPath.get(targetPath) ?? plan : plan).guardrails.output }
}

/**
 * The guardrail stages as a gateway runs them: guardrails compiled once per snapshot (on the first
 * request that needs them), config attachments read from the exchange's plan (once per plan), and
 * network checks calling out through the SSRF-safe dispatcher.
 */
export function guardrailFeature(options: GuardrailFeatureOptions = {}): { before: StageFactory; after: StageFactory } {
  const deps = { dispatcher: ssrfSafeDispatcher(options.allowPrivateNetwork ?? false) }
  const compiled = new WeakMap<RuntimeConfig, GuardrailRuntime>()
  const plans = new WeakMap<PlanNode<ProviderRef>, ConfigGuardrails>()
  return guardrailStages({
    guardrailsOf(exchange) {
      const runtime = exchange.context.runtime
      let guardrails = compiled.get(runtime)
      if (!guardrails) {
        const result = compileGuardrails(runtime.snapshot.guardrails, runtime.snapshot.guardrailDefaults, deps)
        if (result.problems.length > 0) options.onProblems?.(result.problems)
        guardrails = result.runtime
        compiled.set(runtime, guardrails)
      }
      return guardrails
    },
    configGuardrails(exchange) {
      const route = exchange.route
      if (route?.kind !== 'config') return null
      let found = plans.get(route.plan)
      if (!found) {
        found = planGuardrails(route.plan)
        plans.set(route.plan, found)
      }
      return found
    },
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.onAsyncResults ? { onAsyncResults: options.onAsyncResults } : {}),
  })
}
