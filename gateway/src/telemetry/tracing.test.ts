import { describe, expect, it } from 'vitest'
import { tracingEnabled } from '../core/tracing.ts'
import { encodesSpansAtEnd, startTracing, tracingRequested } from './tracing.ts'

describe('tracingRequested', () => {
  it('is on with an OTLP endpoint or an explicit exporter, off otherwise or when the SDK is disabled', () => {
    expect(tracingRequested({})).toBe(false)
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true)
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true)
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false)
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true)
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false)
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false)
  })
})

describe('encodesSpansAtEnd', () => {
  it('is on for OTLP over http/protobuf only, the default protocol', () => {
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true)
    expect(encodesSpansAtEnd({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toBe(true)
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe(true)
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe(false)
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toBe(false)
    expect(encodesSpansAtEnd({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toBe(false)
    expect(encodesSpansAtEnd({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(false)
  })
})

describe('startTracing', () => {
  it('loads nothing and leaves spans off when the environment does not ask for traces', async () => {
    const saved = { ...process.env }
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name]
    try {
      expect(await startTracing({ serviceName: 'test' })).toBeNull()
      expect(tracingEnabled()).toBe(false)
    } finally {
      Object.assign(process.env, saved)
    }
  })
})
