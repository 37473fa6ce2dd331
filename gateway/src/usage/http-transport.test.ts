import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { batchParts, httpUsageTransport } from './http-transport.ts'
import { RecordBatch } from './record-batch.ts'

/** Records of about 1 KiB, some with text outside ASCII (bytes differ from characters). */
const records = Array.from({ length: 200 }, (_, index) => JSON.stringify({ id: `rec-${index}`, note: index % 7 === 0 ? 'é€🙂'.repeat(100) : 'x'.repeat(1000) }))

describe('batchParts', () => {
  it('frames the records as {"records":[...]} in parts, with their length in bytes', () => {
    const { parts, bytes } = batchParts(RecordBatch.of(records))
    const body = Buffer.concat(parts).toString('utf8')
    expect(JSON.parse(body)).toEqual({ records: records.map((line) => JSON.parse(line) as unknown) })
    expect(bytes).toBe(Buffer.byteLength(body))
    // The batch's chunks of 64 KiB, and the framing.
    expect(parts.length).toBeGreaterThan(4)
    expect(Math.max(...parts.map((part) => part.length))).toBeLessThanOrEqual(64 * 1024)
  })

  it('frames one record and a record larger than a part', () => {
    const text = (records: string[]): string => Buffer.concat(batchParts(RecordBatch.of(records)).parts).toString('utf8')
    expect(JSON.parse(text(['{"id":"a"}']))).toEqual({ records: [{ id: 'a' }] })
    const big = JSON.stringify({ id: 'big', text: 'y'.repeat(100_000) })
    expect((JSON.parse(text([big, '{"id":"b"}'])) as { records: unknown[] }).records).toHaveLength(2)
  })
})

describe('httpUsageTransport', () => {
  const received: Array<{ length: string | undefined; authorization: string | undefined; body: string }> = []
  let status = 200
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ length: request.headers['content-length'], authorization: request.headers.authorization, body: Buffer.concat(chunks).toString('utf8') })
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}')
    })
  })
  let url = ''
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('posts the batch with its content length and the gateway token, and throws on a 5xx', async () => {
    const delivery = httpUsageTransport({ controlPlaneUrl: url, token: 'gateway-token' })
    try {
      await delivery.transport(RecordBatch.of(records))
      const [first] = received
      expect(first!.authorization).toBe('Bearer gateway-token')
      expect(Number(first!.length)).toBe(Buffer.byteLength(first!.body))
      expect((JSON.parse(first!.body) as { records: unknown[] }).records).toHaveLength(200)
      status = 503
      await expect(delivery.transport(RecordBatch.of(records.slice(0, 3)))).rejects.toThrow(/HTTP 503/)
    } finally {
      status = 200
      await delivery.close()
    }
  })
})
