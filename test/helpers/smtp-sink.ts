/**
 * A real SMTP server on loopback (`smtp-server`) that keeps every message it accepts: envelope
 * recipients, subject and body. `setFailing(true)` answers every recipient with a temporary
 * failure (451), for retry tests.
 */
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  subject: string
  body: string
}

export interface SmtpSink {
  url: string
  messages: ReceivedMail[]
  /** While true, every recipient is answered 451 (a temporary failure). */
  setFailing(value: boolean): void
  close(): Promise<void>
}

function parse(raw: string): { subject: string; body: string } {
  const split = raw.indexOf('\r\n\r\n')
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ')
  const subject = /^Subject: (.*)$/im.exec(headers)?.[1] ?? ''
  // nodemailer sends plain text as quoted-printable or 7bit; undo soft line breaks and =XX escapes.
  const encoded = raw.slice(split + 4)
  const body = /content-transfer-encoding: quoted-printable/i.test(headers)
    ? encoded.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : encoded
  return { subject, body }
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = []
  let failing = false
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (failing) {
        callback(Object.assign(new Error('try again later'), { responseCode: 451 }))
        return
      }
      callback()
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const { subject, body } = parse(Buffer.concat(chunks).toString('utf8'))
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address
        messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address).sort(), subject, body })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    setFailing(value) {
      failing = value
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
