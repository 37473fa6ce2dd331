/**
 * Model Pricing overrides: /v1/model-pricing. Prices are USD per unit (per text token; per audio
 * token: `audio_input`, `audio_output`, `cached_audio_input`; per image input token: `image_input`;
 * per image: `per_image`, one price whatever the image's quality and size; per second of audio; per
 * character of input: `per_character`); an override's null fields keep the shipped table's value.
 * Every change is a new version (GET .../versions lists them); the newest is compiled into the snapshot and used by
 * gateways for new requests, named on each usage record as its pricing version.
 *
 *   GET    /v1/model-pricing?workspace_id=                  current overrides
 *   PUT    /v1/model-pricing/{provider}/{model}             set (provider: a kind such as `openai`, or a provider id or slug)
 *   GET    /v1/model-pricing/{provider}/{model}/versions    history, newest first
 *   DELETE /v1/model-pricing/{provider}/{model}             back to the table (a deletion version)
 *
 * Organisation-wide overrides need `organisation_settings.update`; a workspace's, `providers.update` there.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { notFound } from '../../errors.ts'
import type { ModelPriceKey, ModelPriceRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, parse, principalOf } from '../http.ts'
import { canSee, requireScope, targetWorkspace, workspaceRefSchema } from './resource-access.ts'

const price = z.number().min(0).max(1000).nullable().default(null)
const putSchema = z.strictObject({
  workspace_id: workspaceRefSchema.optional(),
  input: price, output: price, cached_input: price, cache_write: price, reasoning: price,
  audio_input: price, audio_output: price, cached_audio_input: price, image_input: price, per_image: price, per_audio_second: price, per_character: price,
}).refine(
  (b) => [b.input, b.output, b.cached_input, b.cache_write, b.reasoning, b.audio_input, b.audio_output, b.cached_audio_input, b.image_input, b.per_image, b.per_audio_second, b.per_character].some((v) => v !== null),
  'set at least one price',
)
const keyQuery = z.object({ workspace_id: workspaceRefSchema.optional() }).loose()

function view(record: ModelPriceRecord) {
  return {
    object: 'model-price', id: record.id, workspace_id: record.workspaceId, provider: record.provider, model: record.model, version: record.version,
    deleted: record.deleted, currency: 'USD', unit: 'per token (text, audio and image tokens), per image, per second (audio), per character (speech input)',
    input: record.input, output: record.output, cached_input: record.cachedInput, cache_write: record.cacheWrite, reasoning: record.reasoning,
    audio_input: record.audioInput, audio_output: record.audioOutput, cached_audio_input: record.cachedAudioInput, image_input: record.imageInput,
    per_image: record.perImage, per_audio_second: record.perAudioSecond, per_character: record.perCharacter, created_by: record.createdBy, created_at: record.createdAt,
  }
}

export function modelPricingRoutes(app: FastifyInstance, ctx: AdminContext): void {
  /** The entry a request names; a provider slug the workspace can see becomes its id. */
  async function keyOf(request: FastifyRequest<{ Params: { provider: string; '*': string } }>, reference: string | undefined, write: boolean): Promise<ModelPriceKey> {
    const principal = principalOf(request)
    const workspaceId = await targetWorkspace(ctx, principal, reference)
    requireScope(principal, workspaceId === null ? (write ? 'organisation_settings.update' : 'organisation_settings.read') : (write ? 'providers.update' : 'providers.read'), workspaceId, 'model prices')
    const provider = await ctx.store.providers.get(principal.organizationId, request.params.provider).catch(() => null)
    const providerRef = provider && canSee(principal, provider.workspaceId) ? provider.id : request.params.provider
    return { workspaceId, provider: providerRef, model: request.params['*'].replace(/\/versions$/, '') }
  }

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const workspaceId = await targetWorkspace(ctx, principal, parse(keyQuery, request.query).workspace_id)
    requireScope(principal, workspaceId === null ? 'organisation_settings.read' : 'providers.read', workspaceId, 'model prices')
    const current = (await ctx.store.modelPrices.current(principal.organizationId)).filter((p) => p.workspaceId === null || p.workspaceId === workspaceId)
    return { object: 'list', total: current.length, data: current.map(view) }
  })

  app.get<{ Params: { provider: string; '*': string } }>('/:provider/*', async (request) => {
    if (!request.params['*'].endsWith('/versions')) throw notFound('model price route')
    const key = await keyOf(request, parse(keyQuery, request.query).workspace_id, false)
    const history = await ctx.store.modelPrices.history(principalOf(request).organizationId, key)
    return { object: 'list', total: history.length, data: history.map(view) }
  })

  app.put<{ Params: { provider: string; '*': string } }>('/:provider/*', async (request) => {
    const body = parse(putSchema, request.body)
    const key = await keyOf(request, body.workspace_id, true)
    const principal = principalOf(request)
    const record = await ctx.store.modelPrices.put(principal.organizationId, key, {
      input: body.input, output: body.output, cachedInput: body.cached_input, cacheWrite: body.cache_write, reasoning: body.reasoning,
      audioInput: body.audio_input, audioOutput: body.audio_output, cachedAudioInput: body.cached_audio_input, imageInput: body.image_input, perImage: body.per_image, perAudioSecond: body.per_audio_second, perCharacter: body.per_character,
    }, principal.actor.id)
    audit(request, { action: 'model_price.update', resourceType: 'model_price', resourceId: record.id, workspaceId: key.workspaceId })
    return view(record)
  })

  app.delete<{ Params: { provider: string; '*': string } }>('/:provider/*', async (request) => {
    const key = await keyOf(request, parse(keyQuery, request.query).workspace_id, true)
    const principal = principalOf(request)
    const record = await ctx.store.modelPrices.remove(principal.organizationId, key, principal.actor.id)
    if (!record) throw notFound('model price')
    audit(request, { action: 'model_price.delete', resourceType: 'model_price', resourceId: record.id, workspaceId: key.workspaceId })
    return view(record)
  })
}
