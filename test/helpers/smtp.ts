/** An SMTP server on loopback (the smtp-server package) that takes the messages an instance sends, with credentials, and keeps them to read back. */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { SMTPServer } from 'smtp-server'

export interface Mail {
  from: string
  to: string[]
  raw: string
}

export class TestSmtp {
  private constructor(
    /** Every message taken, in order. */
    readonly received: Mail[],
    private readonly server: SMTPServer,
    /** The PLINTH_SMTP_URL that reaches it. */
    readonly url: string,
  ) {}

  static async start(): Promise<TestSmtp> {
    const received: Mail[] = []
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth: (auth, _session, callback) =>
        auth.username === 'mailer' && auth.password === 's3cret' ? callback(null, { user: 'mailer' }) : callback(new Error('bad credentials')),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = []
        stream.on('data', (c: Buffer) => chunks.push(c))
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          })
          callback()
        })
      },
      logger: false,
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.server.address() as AddressInfo
    return new TestSmtp(received, server, `smtp://mailer:s3cret@127.0.0.1:${port}`)
  }

  /** The messages sent to an address. */
  to(address: string): Mail[] {
    return this.received.filter((mail) => mail.to.includes(address))
  }

  /** Waits until `address` got `count` messages. */
  async waitFor(address: string, count: number): Promise<Mail[]> {
    for (let i = 0; i < 500 && this.to(address).length < count; i++) await sleep(20)
    assert.equal(this.to(address).length, count, `${address} got its messages`)
    return this.to(address)
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** The text of a quoted-printable body part, soft line breaks joined. */
export const quotedPrintable = (text: string): string =>
  Buffer.from(
    text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8')
