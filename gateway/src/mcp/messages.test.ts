import { describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { filterToolList, INVALID_PARAMS, readClientMessage, toolRefusal } from './messages.ts'

describe('readClientMessage', () => {
  it('reads the method, the id and a tools/call tool name', () => {
    expect(readClientMessage({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {} } })).toEqual({ id: 7, method: 'tools/call', toolName: 'echo' })
    expect(readClientMessage({ jsonrpc: '2.0', id: 'a', method: 'tools/list' })).toEqual({ id: 'a', method: 'tools/list', toolName: null })
    expect(readClientMessage({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({ id: null, method: 'notifications/initialized', toolName: null })
    // A response the client sends to a server request carries no method.
    expect(readClientMessage({ jsonrpc: '2.0', id: 3, result: {} })).toEqual({ id: null, method: null, toolName: null })
  })

  it('refuses batches, non-objects, other JSON-RPC versions and a tools/call without a name', () => {
    for (const body of [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'text', null, { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }]) {
      expect(() => readClientMessage(body)).toThrow(GatewayError)
    }
  })
})

describe('tool refusals and tools/list filtering', () => {
  it('answers a refused call the way a server answers an unknown tool', () => {
    expect(toolRefusal(9, 'add')).toEqual({ jsonrpc: '2.0', id: 9, error: { code: INVALID_PARAMS, message: 'Tool add is not available on this server' } })
  })

  it('keeps only allowed tools in the result answering the list request, and leaves other messages alone', () => {
    const list = { jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'echo' }, { name: 'add' }, { name: 42 }], nextCursor: 'c' } }
    expect(filterToolList(list, 2, new Set(['echo']))).toEqual({ jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'echo' }], nextCursor: 'c' } })
    expect(filterToolList(list, 3, new Set(['echo']))).toBe(list)
    const notification = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }
    expect(filterToolList(notification, 2, new Set())).toBe(notification)
  })
})
