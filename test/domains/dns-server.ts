/**
 * A DNS server on loopback for the tests (dns2 encodes and decodes the packets): TXT records set
 * by the test, NXDOMAIN for every name it holds nothing for, and an empty answer (NOERROR, no
 * data) for names it knows without TXT records.
 */
import dns2 from 'dns2'

const NXDOMAIN = 3

export class TestDnsServer {
  /** TXT records by lowercase name: each record a list of chunks (character-strings). */
  readonly txt = new Map<string, string[][]>()
  /** Names that exist but hold no TXT record. */
  readonly withoutTxt = new Set<string>()
  /** Names asked about, in order. */
  readonly asked: string[] = []

  private constructor(private readonly server: dns2.UDPServer) {
    server.on('request', (request, send) => {
      const response = dns2.Packet.createResponseFromRequest(request)
      const [question] = request.questions
      if (question === undefined) {
        void send(response)
        return
      }
      const name = question.name.toLowerCase()
      this.asked.push(name)
      const records = this.txt.get(name)
      if (records && question.type === dns2.Packet.TYPE.TXT) {
        for (const chunks of records) {
          response.answers.push({ name: question.name, type: dns2.Packet.TYPE.TXT, class: dns2.Packet.CLASS.IN, ttl: 1, data: chunks } as dns2.Packet.Resource)
        }
      } else if (!records && !this.withoutTxt.has(name)) {
        response.header.rcode = NXDOMAIN
      }
      void send(response)
    })
  }

  static async start(): Promise<TestDnsServer> {
    const server = dns2.createUDPServer({ type: 'udp4' })
    await server.listen(0, '127.0.0.1')
    return new TestDnsServer(server)
  }

  /** `127.0.0.1:port`, as PLINTH_DNS_SERVERS takes it. */
  get address(): string {
    return `127.0.0.1:${this.server.address().port}`
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
