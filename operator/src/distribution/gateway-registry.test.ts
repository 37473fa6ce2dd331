import { describe, expect, it } from 'vitest'
import { GatewayRegistry } from './gateway-registry.ts'

describe('GatewayRegistry', () => {
  const at = new Date('2026-11-23T12:00:00.000Z')

  it('records ACKs, NACKs and connections per gateway', () => {
    const registry = new GatewayRegistry(() => at)
    const changes: string[] = []
    registry.onChange((status) => changes.push(status.gatewayId))
    registry.connected('g1', true)
    registry.ack('g1', 10)
    registry.nack('g1', 11, [{ path: 'providers.0.kind', message: 'unknown kind' }])
    expect(registry.list()).toEqual([
      {
        gatewayId: 'g1',
        connected: true,
        appliedGeneration: 10,
        appliedAt: at.toISOString(),
        lastNack: { generation: 11, at: at.toISOString(), problems: [{ path: 'providers.0.kind', message: 'unknown kind' }] },
        lastSeenAt: at.toISOString(),
      },
    ])
    expect(changes).toEqual(['g1', 'g1', 'g1'])
  })

  it('programmed generation: the lowest any connected gateway applied; disconnected ones do not hold it back', () => {
    const registry = new GatewayRegistry(() => at)
    expect(registry.programmedGeneration()).toBeNull()
    registry.connected('g1', true)
    registry.connected('g2', true)
    registry.ack('g1', 12)
    expect(registry.programmedGeneration()).toBe(-1)
    registry.ack('g2', 10)
    expect(registry.programmedGeneration()).toBe(10)
    registry.connected('g2', false)
    expect(registry.programmedGeneration()).toBe(12)
  })

  it('hands out copies: a caller cannot change the registry through list()', () => {
    const registry = new GatewayRegistry(() => at)
    registry.ack('g1', 1)
    registry.list()[0]!.appliedGeneration = 99
    expect(registry.list()[0]!.appliedGeneration).toBe(1)
  })
})
