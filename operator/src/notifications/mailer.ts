/**
 * The SMTP connection notifications go out through (`nodemailer`), configured by environment:
 *
 *   GATEHOUSE_SMTP_URL=smtp://user:pass@mail.example:587   (or smtps://… for implicit TLS)
 *   or GATEHOUSE_SMTP_HOST, GATEHOUSE_SMTP_PORT (587), GATEHOUSE_SMTP_USER, GATEHOUSE_SMTP_PASSWORD,
 *      GATEHOUSE_SMTP_SECURE (true for implicit TLS; default true only on port 465)
 *   GATEHOUSE_SMTP_FROM (default "Gatehouse <gatehouse@localhost>")
 *   GATEHOUSE_SMTP_TIMEOUT_MS (10000): connection, greeting and socket timeouts.
 *
 * Without GATEHOUSE_SMTP_URL or GATEHOUSE_SMTP_HOST there is no mailer (null): notifications are
 * still recorded, marked not sent, and the worker says so in its log.
 */
import nodemailer, { type Transporter } from 'nodemailer'

export interface MailMessage {
  to: readonly string[]
  subject: string
  text: string
}

export interface Mailer {
  /** Sends one message; rejects when the server refuses it or cannot be reached. */
  send(message: MailMessage): Promise<void>
  close(): void
}

const DEFAULT_FROM = 'Gatehouse <gatehouse@localhost>'
const DEFAULT_TIMEOUT_MS = 10_000

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`)
  return value
}

export function mailerFromEnv(env: NodeJS.ProcessEnv): Mailer | null {
  const url = env.GATEHOUSE_SMTP_URL
  const host = env.GATEHOUSE_SMTP_HOST
  if (!url && !host) return null
  const timeoutMs = positiveInteger('GATEHOUSE_SMTP_TIMEOUT_MS', env.GATEHOUSE_SMTP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS)
  const timeouts = { connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs }
  let transport: Transporter
  if (url) {
    transport = nodemailer.createTransport({ url, ...timeouts })
  } else {
    const port = positiveInteger('GATEHOUSE_SMTP_PORT', env.GATEHOUSE_SMTP_PORT, 587)
    const secure = env.GATEHOUSE_SMTP_SECURE === undefined || env.GATEHOUSE_SMTP_SECURE === '' ? port === 465 : env.GATEHOUSE_SMTP_SECURE === 'true'
    const auth = env.GATEHOUSE_SMTP_USER ? { user: env.GATEHOUSE_SMTP_USER, pass: env.GATEHOUSE_SMTP_PASSWORD ?? '' } : undefined
    transport = nodemailer.createTransport({ host, port, secure, ...(auth ? { auth } : {}), ...timeouts })
  }
  const from = env.GATEHOUSE_SMTP_FROM || DEFAULT_FROM
  return {
    async send(message) {
      await transport.sendMail({ from, to: [...message.to], subject: message.subject, text: message.text })
    },
    close: () => transport.close(),
  }
}
