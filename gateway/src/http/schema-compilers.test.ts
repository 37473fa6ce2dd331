import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { lazySchemaCompilers } from './schema-compilers.ts'

describe('lazySchemaCompilers', () => {
  it('validates and serialises a route that declares schemas as Fastify does by default', async () => {
    const app = Fastify({ schemaController: { compilersFactory: lazySchemaCompilers() } })
    app.post('/echo', {
      schema: {
        body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        response: { 200: { type: 'object', properties: { name: { type: 'string' } } } },
      },
    }, async (request) => ({ ...(request.body as object), secret: 'not serialised' }))
    const refused = await app.inject({ method: 'POST', url: '/echo', payload: { other: 1 } })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().message).toContain("must have required property 'name'")
    const served = await app.inject({ method: 'POST', url: '/echo', payload: { name: 'a' } })
    expect(served.statusCode).toBe(200)
    expect(served.json()).toEqual({ name: 'a' })
    await app.close()
  })
})
