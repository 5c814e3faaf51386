/**
 * Requests of the browser to the site's own origin, answered in this process by the site server
 * exactly as a visitor's would be (the same bytes, status and headers: Content-Security-Policy,
 * the version's `_headers`), with the password page left out for the owners and editors who ask.
 * Each request is real HTTP between Node's own client and server over an in-memory stream, so
 * nothing listens on a port and nothing reaches the network.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { Duplex } from 'node:stream'

/** What the site answered. */
export interface SiteAnswer {
  status: number
  /** Names and values as sent, repeats kept apart. */
  headers: Array<{ name: string; value: string }>
  body: Buffer
}

export interface SiteRequest {
  method: string
  /** The path and query. */
  url: string
  /** The request's headers; `host` names the site. */
  headers: Record<string, string>
}

/** Headers about the connection, not the answer: never passed on to the browser. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length'])

/** One end of an in-memory connection: what is written to it is read from its peer. */
class Half extends Duplex {
  peer: Half | null = null

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.peer?.push(chunk)
    done()
  }

  override _final(done: (error?: Error | null) => void): void {
    this.peer?.push(null)
    done()
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.peer?.push(null)
    done(error)
  }
}

function connectionPair(): [Half, Half] {
  const client = new Half()
  const server = new Half()
  client.peer = server
  server.peer = client
  return [client, server]
}

/** Sends requests to `handle` (a site server's) over in-memory connections; `maxBytes` bounds one answer's body. */
export function siteRequester(handle: (req: IncomingMessage, res: ServerResponse) => void, maxBytes: number): (request: SiteRequest) => Promise<SiteAnswer> {
  const server = http.createServer(handle)
  return (request) =>
    new Promise<SiteAnswer>((resolve, reject) => {
      const req = http.request(
        {
          method: request.method,
          path: request.url,
          // Uncompressed: the browser is handed the body as it is to be read.
          headers: { ...request.headers, 'accept-encoding': 'identity' },
          createConnection: () => {
            const [client, serverSide] = connectionPair()
            server.emit('connection', serverSide)
            return client
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          let size = 0
          res.on('data', (chunk: Buffer) => {
            size += chunk.length
            if (size > maxBytes) res.destroy(new Error(`the answer is larger than ${maxBytes} bytes`))
            else chunks.push(chunk)
          })
          res.on('error', reject)
          res.on('end', () => {
            const headers: SiteAnswer['headers'] = []
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
              const name = res.rawHeaders[i]!
              if (!HOP_BY_HOP.has(name.toLowerCase())) headers.push({ name, value: res.rawHeaders[i + 1]! })
            }
            resolve({ status: res.statusCode ?? 502, headers, body: Buffer.concat(chunks) })
          })
        },
      )
      req.on('error', reject)
      req.end()
    })
}
