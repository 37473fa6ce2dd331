import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { MultipartFieldScanner, scannedUpload } from './multipart-field.ts'

/** A multipart body the way the platform's FormData writes it, with the fields in the order given. */
async function multipart(fields: Array<[string, string | Blob]>): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData()
  for (const [name, value] of fields) form.append(name, value, ...(value instanceof Blob ? ['clip.wav'] : []))
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! }
}

function scan(body: Buffer, chunkBytes: number): string | null {
  const scanner = new MultipartFieldScanner('model')
  for (let at = 0; at < body.length; at += chunkBytes) scanner.observe(body.subarray(at, at + chunkBytes))
  return scanner.value
}

describe('MultipartFieldScanner', () => {
  const audio = new Blob([Buffer.alloc(200_000, 7)])

  it('finds the field before or after the file, whatever the chunk boundaries cut', async () => {
    const before = await multipart([['model', 'whisper-1'], ['file', audio]])
    const after = await multipart([['file', audio], ['response_format', 'json'], ['model', 'gpt-4o-transcribe']])
    for (const chunkBytes of [1, 3, 17, 1024, 65_536, 1_000_000]) {
      expect(scan(before.body, chunkBytes)).toBe('whisper-1')
      expect(scan(after.body, chunkBytes)).toBe('gpt-4o-transcribe')
    }
  })

  it('finds nothing in a body without the field, and ignores the same words inside a file', async () => {
    expect(scan((await multipart([['file', audio], ['prompt', 'hello']])).body, 4096)).toBeNull()
    const lookalike = new Blob(['model = whisper-1; name="model"'])
    expect(scan((await multipart([['file', lookalike], ['model', 'tts-1']])).body, 5)).toBe('tts-1')
  })

  it('passes the upload through unchanged, noting the fields on the way', async () => {
    const { body } = await multipart([['file', audio], ['model', 'whisper-1'], ['size', '512x512']])
    const scanners = ['model', 'size', 'n'].map((name) => new MultipartFieldScanner(name))
    const chunks: Buffer[] = []
    for await (const chunk of scannedUpload(Readable.from([body.subarray(0, 100_000), body.subarray(100_000)]), scanners)) chunks.push(chunk as Buffer)
    expect(Buffer.concat(chunks).equals(body)).toBe(true)
    expect(scanners.map((scanner) => scanner.value)).toEqual(['whisper-1', '512x512', null])
  })
})
