/** Form posts to a published site's host, as a browser or a page's script sends them, and a site with a booking form. */
import http from 'node:http'
import { type BundleFile, bundle, SITE_DOMAIN, type TestServer } from './server.ts'

export interface FormAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  json: any
}

/** A POST to `path` (`/_forms/{name}`) on the site host `label`, with a body as given (a string or bytes) and its Content-Type. */
export function postForm(
  server: TestServer,
  label: string,
  path: string,
  body: string | Buffer,
  options: { contentType?: string; accept?: string; headers?: Record<string, string> } = {},
): Promise<FormAnswer> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: {
          host: `${label}.${SITE_DOMAIN}`,
          'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(body)),
          ...(options.accept ? { accept: options.accept } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => {
          let json: any
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      },
    )
    // A server that refuses a large body early may close the connection while it is still being sent.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)))
    req.end(body)
  })
}

/** A urlencoded body from pairs (a name may repeat). */
export const urlencoded = (pairs: Array<[string, string]> | Record<string, string>): string =>
  new URLSearchParams(Array.isArray(pairs) ? pairs : Object.entries(pairs)).toString()

/** A multipart/form-data body and its Content-Type, made by the platform's own FormData. */
export async function multipart(
  parts: Array<[string, string | { filename: string; type: string; bytes: Buffer }]>,
): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData()
  for (const [name, value] of parts) {
    if (typeof value === 'string') form.append(name, value)
    else form.append(name, new Blob([new Uint8Array(value.bytes)], { type: value.type }), value.filename)
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! }
}

/** The booking page of a restaurant: a form `booking` with name, email, date, party, notes and a file. */
export const BOOKING_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Book a table</title></head><body>
<h1>Book a table</h1>
<form method="post" action="/_forms/booking" enctype="multipart/form-data">
  <input type="hidden" name="_next" value="/booked.html">
  <p style="display:none"><label>Leave empty <input name="_gotcha" tabindex="-1" autocomplete="off"></label></p>
  <p><label for="name">Name</label> <input id="name" name="name" required></p>
  <p><label for="email">E-mail</label> <input id="email" type="email" name="email"></p>
  <p><label for="date">Date</label> <input id="date" type="date" name="date"></p>
  <p><label for="party">Guests</label> <select id="party" name="party"><option>2</option><option>4</option><option>6</option></select></p>
  <p><label for="notes">Notes</label> <textarea id="notes" name="notes"></textarea></p>
  <p><label for="menu">Menu wishes (a file)</label> <input id="menu" type="file" name="menu"></p>
  <p><button type="submit">Book</button></p>
</form></body></html>`

/** A restaurant's bundle: its home page, the booking page and the page a booking leads to. */
export const restaurantBundle = (extra: BundleFile[] = []) =>
  bundle('Chez Plinth', [
    { path: 'book.html', content: BOOKING_PAGE },
    { path: 'booked.html', content: '<!doctype html><html lang="en"><head><title>Booked</title></head><body><h1>See you soon</h1></body></html>' },
    ...extra,
  ])
