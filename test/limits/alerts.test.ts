/**
 * The reset and alert worker end to end: a real PostgreSQL store, the gateways' budget counters
 * in real Redis, a gateway enforcing them, and a real SMTP server on loopback receiving the mail.
 *
 * - every notification kind (usage threshold, usage exhausted, upcoming rotation, completed
 *   rotation, expiry warning) arrives once, to the right recipients (workspace admins and managers,
 *   organisation owners and admins, the key's alert e-mails; a user key's user), never to plain
 *   members or another workspace's admins;
 * - a periodic reset: the gateway refuses an exhausted key (412), serves it again once the period
 *   has passed, the worker writes the new period (last_reset_at, next_usage_reset_at) and
 *   reactivates the key marked exhausted, and what was spent in the new period is kept; the
 *   exhausted alert fires again in the new period;
 * - without SMTP the notifications are recorded as not sent, with a log line;
 * - a failing SMTP server: the send is retried with backoff and then delivered once;
 * - two replicas: only the lease holder works.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { limiterFromEnv, limitsStage, type LimiterSetup } from '@gatehouse/gateway'
import { hashApiKey, limitCounterKey } from '@gatehouse/gateway/snapshot'
import { compileLimits } from '../../operator/src/compile/limits.ts'
import { keyEntries } from '../../operator/src/compile/snapshot.ts'
import { rotateKeyRecord } from '../../operator/src/identity/api-keys.ts'
import { mailerFromEnv, type Mailer } from '../../operator/src/notifications/mailer.ts'
import { openStore, type ApiKeyRecord, type Store } from '../../operator/src/store/index.ts'
import { createTestDatabase, TEST_ENCRYPTION_KEY } from '../../operator/src/store/testing.ts'
import { generateUsageRecords } from '../../operator/src/usage/testing.ts'
import { createResetsAndAlertsWorker } from '../../operator/src/workers/resets-and-alerts.ts'
import { startTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.ts'
import { pollUntil } from '../helpers/processes.ts'
import { Redis } from 'ioredis'
import { dropPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'

const skipReason = await redisSkipReason()
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

interface World {
  store: Store
  orgId: string
  workspaceId: string
  otherWorkspaceId: string
  setup: LimiterSetup
  counters: { keyPrefix: string; usage(keys: readonly string[]): Promise<number[]> }
  logs: Array<{ level: string; message: string }>
  logger: { info(o: unknown, m?: string): void; warn(o: unknown, m?: string): void; error(o: unknown, m?: string): void }
}

/** The organisation's people: who must and who must not receive usage alerts. */
const USAGE_RECIPIENTS = ['org-admin@example.test', 'owner@example.test', 'ws-admin@example.test', 'ws-manager@example.test']

async function world(): Promise<World> {
  const database = await createTestDatabase()
  const store = await openStore({ kind: 'postgres', url: database.url, encryptionKey: TEST_ENCRYPTION_KEY })
  cleanups.push(async () => {
    await store.close()
    await database.drop()
  })
  const org = await store.organizations.create({ name: 'Alerts' })
  const workspace = await store.workspaces.create({ organizationId: org.id, slug: 'team', name: 'Team' })
  const other = await store.workspaces.create({ organizationId: org.id, slug: 'other', name: 'Other' })
  const user = (email: string, role: 'owner' | 'admin' | 'member') => store.users.create({ organizationId: org.id, email, role })
  await user('owner@example.test', 'owner')
  await user('org-admin@example.test', 'admin')
  await user('org-member@example.test', 'member')
  const member = async (email: string, workspaceId: string, role: 'admin' | 'manager' | 'member') => {
    const created = await user(email, 'member')
    await store.members.upsert(workspaceId, created.id, role)
    return created
  }
  await member('ws-admin@example.test', workspace.id, 'admin')
  await member('ws-manager@example.test', workspace.id, 'manager')
  await member('ws-member@example.test', workspace.id, 'member')
  await member('other-admin@example.test', other.id, 'admin')
  const setup = limiterFromEnv({ GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_LIMITS_KEY_PREFIX: `test-alerts-${randomUUID().slice(0, 8)}:` })
  cleanups.push(async () => {
    await setup.limiter.close()
    const redis = new Redis(TEST_REDIS_URL)
    await dropPrefix(redis, setup.keyPrefix)
    await redis.quit()
  })
  const logs: World['logs'] = []
  const log = (level: string) => (o: unknown, m?: string) => logs.push({ level, message: typeof o === 'string' ? o : (m ?? '') })
  return {
    store, orgId: org.id, workspaceId: workspace.id, otherWorkspaceId: other.id, setup,
    counters: { keyPrefix: setup.keyPrefix, usage: (keys) => setup.limiter.usage(keys) },
    logs, logger: { info: log('info'), warn: log('warn'), error: log('error') },
  }
}

async function insertKey(w: World, fields: Partial<Parameters<Store['apiKeys']['insert']>[0]> & { rawKey?: string }): Promise<ApiKeyRecord> {
  const raw = fields.rawKey ?? `gh-ws-${randomUUID()}`
  return w.store.apiKeys.insert({
    id: randomUUID(), organizationId: w.orgId, workspaceId: w.workspaceId, userId: null, type: 'workspace', subtype: 'service', name: 'billing-service',
    keyHash: hashApiKey(raw, TEST_PEPPER), keyHint: raw.slice(-4), scopes: [], ...fields,
  })
}

/** Spends `amount` on a key's budget counter the way the gateway does: reserve, then settle. */
async function spend(w: World, key: ApiKeyRecord, amount: number, now = new Date()): Promise<void> {
  const [limit] = compileLimits({ policies: [], apiKeys: [key], workspaces: [], providers: [], integrations: [], now, report: () => undefined }).filter((l) => l.kind === 'usage')
  await spendOn(w, limitCounterKey(w.setup.keyPrefix, w.orgId, limit!, [], now.getTime()), amount)
}

async function spendOn(w: World, counterKey: string, amount: number): Promise<void> {
  const id = randomUUID()
  const reserved = await w.setup.limiter.reserve(id, [{ kind: 'budget', key: counterKey, limit: Number.MAX_SAFE_INTEGER, amount, enforce: true }], 60_000)
  expect(reserved.admitted).toBe(true)
  await w.setup.limiter.settle(id, [{ kind: 'budget', key: counterKey, actual: amount }])
}

/** This test's control-plane replica (one lease holder across its runs). */
function worker(w: World, mailer: Mailer | null, clock = () => new Date()) {
  return createResetsAndAlertsWorker({ store: w.store, clock, mailer, counters: w.counters, logger: w.logger, holder: 'test-replica' })
}

function smtpMailer(sink: SmtpSink): Mailer {
  const mailer = mailerFromEnv({ GATEHOUSE_SMTP_URL: sink.url, GATEHOUSE_SMTP_FROM: 'Gatehouse <alerts@gatehouse.test>' })!
  cleanups.push(async () => mailer.close())
  return mailer
}

describe.skipIf(skipReason !== null)('reset and alert worker (PostgreSQL, Redis, SMTP on loopback)', () => {
  let sink: SmtpSink
  beforeAll(async () => {
    sink = await startSmtpSink()
  })
  afterAll(async () => {
    await sink.close()
  })
  afterEach(() => {
    sink.messages.length = 0
  })

  it('sends every notification kind once, to the right recipients', async () => {
    const w = await world()
    const mailer = smtpMailer(sink)
    const now = new Date()
    const budgetKey = await insertKey(w, {
      name: 'billing-service', usageLimits: { credit_limit: 1000, type: 'tokens', alert_threshold: 500 }, alertEmails: ['finops@example.test'],
    })
    const developer = await w.store.users.create({ organizationId: w.orgId, email: 'dev@example.test', role: 'member' })
    const dayMs = 86_400_000
    const userKey = await insertKey(w, {
      name: 'dev-laptop', subtype: 'user', userId: developer.id, expiresAt: new Date(now.getTime() + 3 * dayMs).toISOString(),
      rotationPolicy: { rotation_period: 'monthly', key_transition_period_ms: 3_600_000 }, nextRotationAt: new Date(now.getTime() + 2 * dayMs).toISOString(),
    })
    const rotatedKey = await insertKey(w, { name: 'ci-runner', alertEmails: ['ci-owners@example.test'] })
    expect(await rotateKeyRecord(w.store, TEST_PEPPER, rotatedKey, 3_600_000, now)).not.toBeNull()

    await spend(w, budgetKey, 600)
    const first = await worker(w, mailer).runOnce()
    expect(first.leader).toBe(true)
    expect(first.delivery).toEqual({ sent: 4, failed: 0, notSent: 0 })
    const bySubject = (text: string) => sink.messages.filter((m) => m.subject.includes(text))
    const threshold = bySubject('has used 600 of its 1000 tokens usage limit')
    expect(threshold).toHaveLength(1)
    expect(threshold[0]!.to).toEqual([...USAGE_RECIPIENTS, 'finops@example.test'].sort())
    expect(threshold[0]!.from).toBe('alerts@gatehouse.test')
    expect(threshold[0]!.body).toContain('Alert threshold: 500 tokens')
    const upcoming = bySubject('API key dev-laptop will be rotated on')
    expect(upcoming.map((m) => m.to)).toEqual([['dev@example.test']])
    const expiring = bySubject('API key dev-laptop expires on')
    expect(expiring.map((m) => m.to)).toEqual([['dev@example.test']])
    expect(expiring[0]!.body).toContain(userKey.expiresAt!)
    const rotated = bySubject('API key ci-runner was rotated')
    expect(rotated.map((m) => m.to)).toEqual([['ci-owners@example.test']])
    expect(rotated[0]!.body).not.toContain('gh-') // the new secret is never mailed

    // Nothing changed: nothing is sent again.
    expect((await worker(w, mailer).runOnce()).delivery.sent).toBe(0)
    expect(sink.messages).toHaveLength(4)

    await spend(w, budgetKey, 400)
    await worker(w, mailer).runOnce()
    const exhausted = bySubject('has exhausted its 1000 tokens usage limit')
    expect(exhausted).toHaveLength(1)
    expect(exhausted[0]!.to).toEqual([...USAGE_RECIPIENTS, 'finops@example.test'].sort())
    for (const message of sink.messages) {
      for (const outsider of ['org-member@example.test', 'ws-member@example.test', 'other-admin@example.test']) expect(message.to).not.toContain(outsider)
    }

    // Raising the credit limit re-arms both alerts (the spec's state table): usage 1000 of 1500 passes the threshold only.
    await w.store.apiKeys.update(w.orgId, budgetKey.id, { usageLimits: { credit_limit: 1500, type: 'tokens', alert_threshold: 500 } })
    await worker(w, mailer).runOnce()
    expect(bySubject('has used 1000 of its 1500 tokens usage limit')).toHaveLength(1)
    expect(bySubject('has exhausted its 1500')).toHaveLength(0)
    const records = await w.store.notifications.list(w.orgId)
    expect(records.map((r) => r.status)).toEqual(records.map(() => 'sent'))
    expect(records.map((r) => r.kind).sort()).toEqual(['key_expiry_warning', 'key_rotation_completed', 'key_rotation_upcoming', 'usage_exhausted', 'usage_threshold', 'usage_threshold'])
  })

  it('a periodic reset reactivates an exhausted key on a gateway and keeps what the new period spent', async () => {
    const w = await world()
    const mailer = smtpMailer(sink)
    const simulator = await startOpenAISimulator({ recordLimit: 0 })
    cleanups.push(() => simulator.close())
    const gateway: TestGateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], {
      features: { limits: limitsStage({ limiter: w.setup.limiter, keyPrefix: w.setup.keyPrefix }) },
    })
    cleanups.push(() => gateway.close())
    const periodEndsAt = new Date(Date.now() + 4_000).toISOString()
    let key = await insertKey(w, {
      rawKey: gateway.workspaceKey, usageLimits: { credit_limit: 5000, type: 'tokens', periodic_reset_days: 30, next_usage_reset_at: periodEndsAt },
    })
    /** What the control plane would publish for this key: its snapshot entry and its limits. */
    const publish = async () => {
      key = (await w.store.apiKeys.get(w.orgId, key.id))!
      gateway.update((snapshot) => {
        snapshot.organizationId = w.orgId
        snapshot.workspaces = [{ id: w.workspaceId, slug: 'team', name: 'Team', status: 'active' }]
        snapshot.apiKeys = keyEntries(key, new Date(), () => null)
        for (const provider of snapshot.providers ?? []) provider.workspaceId = w.workspaceId
        snapshot.limits = compileLimits({ policies: [], apiKeys: [key], workspaces: [], providers: [], integrations: [], now: new Date(), report: () => undefined })
      })
    }
    const ask = async () => (await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }),
    })).status
    await publish()
    expect(await ask()).toBe(200)

    await spend(w, key, 5000)
    expect(await ask()).toBe(412)
    await worker(w, mailer).runOnce()
    expect(sink.messages.filter((m) => m.subject.includes('has exhausted'))).toHaveLength(1)

    // The period ends: the gateway counts in the new period at once, before any worker run.
    await pollUntil(async () => Date.now() > Date.parse(periodEndsAt) + 50, 10_000, 50)
    expect(await ask()).toBe(200)
    const counterNow = () => {
      const [limit] = compileLimits({ policies: [], apiKeys: [key], workspaces: [], providers: [], integrations: [], now: new Date(), report: () => undefined })
      return w.setup.limiter.usage([limitCounterKey(w.setup.keyPrefix, w.orgId, limit!, [], Date.now())]).then(([used]) => used!)
    }
    const spentInNewPeriod = await counterNow()
    expect(spentInNewPeriod).toBeGreaterThan(0)
    expect(spentInNewPeriod).toBeLessThan(5000)
    // A key marked exhausted (by an operator, or an older control plane) is unusable on the gateway.
    await w.store.apiKeys.update(w.orgId, key.id, { status: 'exhausted' })
    await publish()
    expect(await ask()).toBe(401)

    // The worker writes the new period and reactivates the key; the gateway serves it again.
    const run = await worker(w, mailer).runOnce()
    expect(run.resets).toEqual([{ source: 'api_key', id: key.id, lastResetAt: periodEndsAt, nextUsageResetAt: new Date(Date.parse(periodEndsAt) + 30 * 86_400_000).toISOString(), reactivated: true }])
    await publish()
    expect(key.status).toBe('active')
    expect(key.lastResetAt).toBe(periodEndsAt)
    expect((key.usageLimits as { next_usage_reset_at: string }).next_usage_reset_at).toBe(run.resets[0]!.nextUsageResetAt)
    // The worker's write keeps the counter: what the new period spent before it is still counted.
    expect(await counterNow()).toBe(spentInNewPeriod)
    expect(await ask()).toBe(200)

    // A new period re-arms the exhausted alert.
    await spend(w, key, 5000)
    expect(await ask()).toBe(412)
    await worker(w, mailer).runOnce()
    expect(sink.messages.filter((m) => m.subject.includes('has exhausted'))).toHaveLength(2)
  })

  it('alerts per group of a group_by policy: each group crossing its limit, named in the record, once', async () => {
    const w = await world()
    const mailer = smtpMailer(sink)
    const now = new Date()
    const policy = await w.store.policies.create({
      organizationId: w.orgId, workspaceId: w.workspaceId, kind: 'usage_limits', name: 'per-user tokens',
      conditions: [{ key: 'metadata.team', value: 'red' }], groupBy: [{ key: 'metadata.user' }], type: 'tokens', creditLimit: 100, alertThreshold: 50,
    })
    const [limit] = compileLimits({ policies: [policy], apiKeys: [], workspaces: [], providers: [], integrations: [], now, report: () => undefined })
    // What gateways wrote: usage records naming each group, and each group's counter.
    const people = [
      { user: 'alice', team: 'red', spent: 120, workspaceId: w.workspaceId }, // exhausted (and past the threshold)
      { user: 'bob', team: 'red', spent: 60, workspaceId: w.workspaceId }, // past the threshold
      { user: 'carol', team: 'red', spent: 10, workspaceId: w.workspaceId }, // below it
      { user: 'frank', team: 'blue', spent: 500, workspaceId: w.workspaceId }, // outside the policy's conditions
      { user: 'dave', team: 'red', spent: 500, workspaceId: w.otherWorkspaceId }, // outside the policy's workspace
    ]
    const records = generateUsageRecords({ count: people.length, fromMs: now.getTime() - 60_000, toMs: now.getTime(), organizationId: w.orgId, workspaceIds: [w.workspaceId], seed: 11 })
      .map((record, index) => ({ ...record, workspaceId: people[index]!.workspaceId, metadata: { user: people[index]!.user, team: people[index]!.team, request: randomUUID() } }))
    await w.store.usageLogs.ingest(records)
    for (const person of people) await spendOn(w, limitCounterKey(w.setup.keyPrefix, w.orgId, limit!, [person.user], now.getTime()), person.spent)

    const run = await worker(w, mailer).runOnce()
    expect(run.alerts).toBe(3)
    const alerts = (await w.store.notifications.list(w.orgId)).filter((n) => n.kind.startsWith('usage_'))
    expect(alerts.map((n) => [n.kind, n.subjectGroup]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      ['usage_exhausted', { 'metadata.user': 'alice' }],
      ['usage_threshold', { 'metadata.user': 'alice' }],
      ['usage_threshold', { 'metadata.user': 'bob' }],
    ])
    expect(alerts.every((n) => n.subjectType === 'policy' && n.subjectId === policy.id)).toBe(true)
    // One e-mail per alert, naming the group, to the policy's workspace's people.
    expect(sink.messages.map((m) => m.subject).sort()).toEqual([
      'Gatehouse: usage limit policy per-user tokens for metadata.user=alice has exhausted its 100 tokens usage limit',
      'Gatehouse: usage limit policy per-user tokens for metadata.user=alice has used 120 of its 100 tokens usage limit',
      'Gatehouse: usage limit policy per-user tokens for metadata.user=bob has used 60 of its 100 tokens usage limit',
    ])
    for (const message of sink.messages) expect(message.to.sort()).toEqual(USAGE_RECIPIENTS)

    // Once: the next run records nothing new; bob crossing the credit limit adds his exhausted alert.
    expect((await worker(w, mailer).runOnce()).alerts).toBe(0)
    await spendOn(w, limitCounterKey(w.setup.keyPrefix, w.orgId, limit!, ['bob'], now.getTime()), 40)
    expect((await worker(w, mailer).runOnce()).alerts).toBe(1)
    expect(sink.messages.filter((m) => m.subject.includes('metadata.user=bob has exhausted'))).toHaveLength(1)
    // Break tried: leaving group_by policies out (as before) records none of these and fails here.
  })

  it('advances the periods of an integration\'s per-workspace limits and keeps what the new period spent', async () => {
    const w = await world()
    const periodEndedAt = '2026-03-01T00:00:00.000Z'
    const now = new Date(Date.parse(periodEndedAt) + 86_400_000)
    const integration = await w.store.integrations.create({
      organizationId: w.orgId, workspaceId: null, slug: 'shared-openai', name: 'Shared OpenAI', kind: 'openai',
      workspaceAccess: [
        { id: w.workspaceId, enabled: true, usage_limits: [{ credit_limit: 1000, type: 'tokens', periodic_reset_days: 30, next_usage_reset_at: periodEndedAt }] },
        { id: w.otherWorkspaceId, enabled: true, usage_limits: [{ credit_limit: 1000, type: 'tokens' }] },
      ],
    })
    const provider = await w.store.providers.upsert({ organizationId: w.orgId, workspaceId: w.workspaceId, slug: 'team-openai', name: 'Team OpenAI', kind: 'openai', integrationId: integration.id })
    const ownerId = `${integration.id}:${w.workspaceId}`
    /** The integration's counter in this workspace, as the gateway names it at `now` from what is stored. */
    const counterKey = async () => {
      const stored = (await w.store.integrations.get(w.orgId, integration.id))!
      const limit = compileLimits({ policies: [], apiKeys: [], workspaces: [], providers: [provider], integrations: [stored], now, report: () => undefined })
        .find((l) => l.kind === 'usage' && l.ownerId === ownerId)!
      return limitCounterKey(w.setup.keyPrefix, w.orgId, limit, [], now.getTime())
    }
    const before = await counterKey()
    await spendOn(w, before, 300)

    const run = await worker(w, null, () => now).runOnce()
    const next = new Date(Date.parse(periodEndedAt) + 30 * 86_400_000).toISOString()
    expect(run.resets).toEqual([{ source: 'integration', id: ownerId, lastResetAt: periodEndedAt, nextUsageResetAt: next, reactivated: false }])
    const [entry, untouched] = (await w.store.integrations.get(w.orgId, integration.id))!.workspaceAccess
    expect(entry).toMatchObject({ id: w.workspaceId, last_reset_at: periodEndedAt, usage_limits: [{ credit_limit: 1000, next_usage_reset_at: next }] })
    // A limit without a period (the other workspace's) has nothing to advance.
    expect(untouched!.last_reset_at).toBeUndefined()
    // The write names the same counter: what the new period spent before it is still counted.
    expect(await counterKey()).toBe(before)
    expect(await w.setup.limiter.usage([before])).toEqual([300])
    // Written once: the next run finds the period current.
    expect((await worker(w, null, () => now).runOnce()).resets).toEqual([])

    // The entry's last_reset_at is the period's anchor (what reset_usage writes): a later one starts
    // a fresh counter. (Break tried: compiling integration entries without their anchor, as before,
    // fails above: the worker's write of next_usage_reset_at then renamed the counter, losing 300.)
    const stored = (await w.store.integrations.get(w.orgId, integration.id))!
    await w.store.integrations.update(w.orgId, integration.id, { workspaceAccess: stored.workspaceAccess.map((access) => (access.id === w.workspaceId ? { ...access, last_reset_at: now.toISOString() } : access)) })
    expect(await counterKey()).not.toBe(before)
    expect(await w.setup.limiter.usage([await counterKey()])).toEqual([0])
  })

  it('without SMTP, records notifications as not sent and says so in the log', async () => {
    const w = await world()
    const key = await insertKey(w, { usageLimits: { credit_limit: 10, type: 'tokens' } })
    await spend(w, key, 10)
    const run = await worker(w, null).runOnce()
    expect(run.delivery).toEqual({ sent: 0, failed: 0, notSent: 1 })
    const [record] = await w.store.notifications.list(w.orgId)
    expect(record).toMatchObject({ kind: 'usage_exhausted', status: 'not_sent' })
    expect(record!.lastError).toMatch(/no SMTP server configured/)
    expect(w.logs.some((l) => l.level === 'warn' && /not sent: no SMTP server is configured/.test(l.message))).toBe(true)
  })

  it('retries a failed send with backoff and delivers it once', async () => {
    const w = await world()
    const mailer = smtpMailer(sink)
    const key = await insertKey(w, { usageLimits: { credit_limit: 10, type: 'tokens' } })
    await spend(w, key, 10)
    let offsetMs = 0
    const clock = () => new Date(Date.now() + offsetMs)
    sink.setFailing(true)
    const failed = await worker(w, mailer, clock).runOnce()
    sink.setFailing(false)
    expect(failed.delivery).toEqual({ sent: 0, failed: 1, notSent: 0 })
    const [record] = await w.store.notifications.list(w.orgId)
    expect(record!.status).toBe('failed')
    expect(record!.attempts).toBe(1)
    expect(Date.parse(record!.nextAttemptAt!) - Date.now()).toBeGreaterThan(20_000)
    // Not yet due: nothing is sent.
    expect((await worker(w, mailer, clock).runOnce()).delivery.sent).toBe(0)
    offsetMs = 31_000
    expect((await worker(w, mailer, clock).runOnce()).delivery.sent).toBe(1)
    expect((await worker(w, mailer, clock).runOnce()).delivery.sent).toBe(0)
    expect(sink.messages).toHaveLength(1)
    expect((await w.store.notifications.list(w.orgId))[0]).toMatchObject({ status: 'sent', attempts: 2 })
  })

  it('only the lease holder works; another replica takes over once the lease lapses', async () => {
    const w = await world()
    const key = await insertKey(w, { usageLimits: { credit_limit: 10, type: 'tokens' } })
    await spend(w, key, 10)
    let offsetMs = 0
    const clock = () => new Date(Date.now() + offsetMs)
    const a = createResetsAndAlertsWorker({ store: w.store, clock, mailer: null, counters: w.counters, logger: w.logger, holder: 'replica-a', intervalMs: 1_000 })
    const b = createResetsAndAlertsWorker({ store: w.store, clock, mailer: null, counters: w.counters, logger: w.logger, holder: 'replica-b', intervalMs: 1_000 })
    expect((await a.runOnce()).leader).toBe(true)
    expect((await b.runOnce()).leader).toBe(false)
    expect((await a.runOnce()).leader).toBe(true)
    offsetMs = 3_500 // replica a missed three runs
    expect((await b.runOnce()).leader).toBe(true)
    expect((await a.runOnce()).leader).toBe(false)
    expect(await w.store.notifications.list(w.orgId)).toHaveLength(1)
  })
})
