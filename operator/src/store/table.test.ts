/**
 * The table definition against both real drivers: a scratch table with one column of every kind,
 * written and read through the definition's INSERT, SET, EXCLUDED and SELECT lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPgliteDatabase } from './pglite-driver.ts'
import { openPostgresDatabase } from './postgres-driver.ts'
import type { SqlDatabase } from './sql.ts'
import { boolean, jsonb, number, table, text, timestamp, type RecordOf } from './table.ts'
import { createTestDatabase, testBackends } from './testing.ts'

let counter = 0
const things = table('scratch_things', {
  id: text().insert(() => `thing-${++counter}`),
  slug: text().insert(),
  label: text().nullable().insert().patch(),
  status: text<'on' | 'off'>().insert('on').patch(),
  weight: number().insert().patch(),
  limitUsd: number().nullable().column('credit_limit').insert().patch(),
  enabled: boolean().insert(true).patch(),
  tags: jsonb<string[]>().insert([]).patch(),
  settings: jsonb<Record<string, unknown>>().nullable().insert().patch(),
  expiresAt: timestamp().nullable().insert().patch(),
  secretHash: text().nullable().insert().patch().hidden(),
  serial: text().generated(() => `serial-${++counter}`),
  seenAt: timestamp().insertOrDefault(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

type Thing = RecordOf<typeof things.fields>

const SCHEMA = `CREATE TABLE scratch_things (
  id text PRIMARY KEY, slug text NOT NULL UNIQUE, label text, status text NOT NULL, weight integer NOT NULL,
  credit_limit numeric, enabled boolean NOT NULL, tags jsonb NOT NULL, settings jsonb, expires_at timestamptz,
  secret_hash text, serial text NOT NULL UNIQUE, seen_at timestamptz NOT NULL DEFAULT '2001-02-03T04:05:06Z', created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now())`

async function openPostgres(): Promise<{ db: SqlDatabase; dispose: () => Promise<void> }> {
  const { url, drop } = await createTestDatabase()
  const db = await openPostgresDatabase({ url, maxConnections: 2 })
  return { db, dispose: async () => { await db.close(); await drop() } }
}

async function openPglite(): Promise<{ db: SqlDatabase; dispose: () => Promise<void> }> {
  const db = await openPgliteDatabase(null)
  return { db, dispose: () => db.close() }
}

const backends = await testBackends()

describe.each(backends)('table definition on $name', (backend) => {
  let db: SqlDatabase
  let dispose: () => Promise<void>

  beforeAll(async () => {
    if (backend.skip) return
    ;({ db, dispose } = await (backend.name === 'pglite' ? openPglite() : openPostgres()))
    await db.script(SCHEMA)
  })
  afterAll(async () => {
    await dispose?.()
  })

  async function insert(values: Parameters<typeof things.insert>[0]): Promise<Thing> {
    const query = things.insert(values)
    const [row] = await db.query(`${query.sql} RETURNING ${things.columns}`, query.params)
    return things.toRecord(row!)
  }

  it.skipIf(backend.skip)('inserts with defaults and maps every kind back to the record', async () => {
    const a = await insert({ slug: 'a', label: null, weight: 3, limitUsd: 12.5, settings: { deep: [1, { x: 'y' }] }, expiresAt: '2030-01-02T03:04:05.000Z' })
    const b = await insert({ slug: 'b', weight: 0, settings: null })
    // Function defaults run once per insert (a constant id would make the second insert fail).
    expect(a.id).not.toBe(b.id)
    expect(a).toMatchObject({
      slug: 'a', label: null, status: 'on', weight: 3, limitUsd: 12.5, enabled: true, tags: [],
      settings: { deep: [1, { x: 'y' }] }, expiresAt: '2030-01-02T03:04:05.000Z',
    })
    // numeric comes back as a string from pg: the record still holds a number on both drivers.
    expect(typeof a.limitUsd).toBe('number')
    expect(a.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(b).toMatchObject({ label: null, limitUsd: null, expiresAt: null, settings: null })
    // A JS array is stored as a JSON array, not turned into a PostgreSQL array literal.
    const [kind] = await db.query<{ t: string }>("SELECT jsonb_typeof(tags) AS t FROM scratch_things WHERE slug = 'a'")
    expect(kind!.t).toBe('array')
    // A nullable document's null is SQL NULL, not the JSON value null.
    const [empty] = await db.query<{ missing: boolean }>("SELECT settings IS NULL AS missing FROM scratch_things WHERE slug = 'b'")
    expect(empty!.missing).toBe(true)
  })

  it.skipIf(backend.skip)('refuses an insert missing a required value before any SQL runs', () => {
    // @ts-expect-error weight is required (no default, not nullable)
    expect(() => things.insert({ slug: 'c', settings: null })).toThrow('scratch_things.weight needs a value on insert')
  })

  it.skipIf(backend.skip)('patches only the fields given: undefined keeps, null clears, updated_at moves', async () => {
    const before = await insert({ slug: 'p', label: 'keep', weight: 1, limitUsd: 4, settings: { a: 1 }, expiresAt: '2031-01-01T00:00:00.000Z' })
    await db.query("UPDATE scratch_things SET updated_at = '2000-01-01T00:00:00Z' WHERE id = $1", [before.id])
    const set = things.set({ label: undefined, limitUsd: null, tags: ['x', 'y'], status: 'off', expiresAt: null }, 2)
    expect(set.sql).toBe('status = $2, credit_limit = $3, tags = $4::jsonb, expires_at = $5::timestamptz, updated_at = now()')
    const [row] = await db.query(`UPDATE scratch_things SET ${set.sql} WHERE id = $1 RETURNING ${things.columns}`, [before.id, ...set.params])
    const after = things.toRecord(row!)
    expect(after).toMatchObject({ label: 'keep', limitUsd: null, tags: ['x', 'y'], status: 'off', expiresAt: null, weight: 1, settings: { a: 1 } })
    expect(after.updatedAt > '2000-01-02').toBe(true)
  })

  it.skipIf(backend.skip)('binds values, never splices them into the SQL', async () => {
    const hostile = "x'); DROP TABLE scratch_things; --"
    const thing = await insert({ slug: hostile, label: hostile, weight: 2, settings: { hostile } })
    const set = things.set({ label: `${hostile}2` }, 2)
    expect(set.sql).not.toContain('DROP')
    await db.query(`UPDATE scratch_things SET ${set.sql} WHERE id = $1`, [thing.id, ...set.params])
    const [row] = await db.query(`SELECT ${things.columns} FROM scratch_things WHERE id = $1`, [thing.id])
    expect(things.toRecord(row!)).toMatchObject({ slug: hostile, label: `${hostile}2`, settings: { hostile } })
  })

  it.skipIf(backend.skip)('derives an upsert from the same definition', async () => {
    const first = await insert({ slug: 'u', weight: 1, settings: null })
    const query = things.insert({ id: 'other-id', slug: 'u', weight: 9, label: 'second', settings: null })
    const [row] = await db.query(
      `${query.sql} ON CONFLICT (slug) DO UPDATE SET ${things.excluded(['weight', 'label'])} RETURNING ${things.columns}`,
      query.params,
    )
    expect(things.toRecord(row!)).toMatchObject({ id: first.id, weight: 9, label: 'second' })
  })

  it.skipIf(backend.skip)('writes a hidden field but never reads it back', async () => {
    const thing = await insert({ slug: 'h', weight: 1, secretHash: 'hash-1' })
    expect(thing).not.toHaveProperty('secretHash')
    expect(things.columns).not.toContain('secret_hash')
    await db.query(`UPDATE scratch_things SET ${things.set({ secretHash: 'hash-2' }, 2).sql} WHERE id = $1`, [thing.id, 'hash-2'])
    const [row] = await db.query<{ secret_hash: string }>('SELECT secret_hash FROM scratch_things WHERE id = $1', [thing.id])
    expect(row!.secret_hash).toBe('hash-2')
  })

  it.skipIf(backend.skip)('makes a generated field itself, whatever the input holds', async () => {
    const first = await insert({ slug: 'g1', weight: 1 })
    // A spread record carries its serial along: reusing it would break the unique constraint.
    const second = await insert({ ...first, id: undefined, slug: 'g2' } as Parameters<typeof things.insert>[0])
    expect(second.serial).not.toBe(first.serial)
  })

  it.skipIf(backend.skip)("leaves an insert-or-default field to the column's DEFAULT when not given", async () => {
    expect((await insert({ slug: 'd1', weight: 1 })).seenAt).toBe('2001-02-03T04:05:06.000Z')
    expect((await insert({ slug: 'd2', weight: 1, seenAt: '2020-01-01T00:00:00.000Z' })).seenAt).toBe('2020-01-01T00:00:00.000Z')
  })

  it.skipIf(backend.skip)('qualifies the select list for joins', () => {
    expect(things.columnsOf('t').split(', ')[5]).toBe('t.credit_limit')
    expect(things.columnsOf('t', 'x_').split(', ')[0]).toBe('t.id AS x_id')
    expect(things.columns.split(', ')).toHaveLength(Object.keys(things.fields).length - 1)
    // @ts-expect-error createdAt is not patchable
    things.set({ createdAt: '2020-01-01T00:00:00.000Z' }, 1)
  })
})
