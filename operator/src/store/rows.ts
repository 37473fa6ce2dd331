/** Small conversions shared by the repositories so both drivers' rows map the same way. */
import { randomUUID } from 'node:crypto'

export function newId(): string {
  return randomUUID()
}

export function json(value: unknown): string {
  return JSON.stringify(value ?? null)
}

export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  return (value instanceof Date ? value : new Date(value)).toISOString()
}

export function isoRequired(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString()
}
