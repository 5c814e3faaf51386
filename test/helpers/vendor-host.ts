/**
 * A stand-in CDN on 127.0.0.1 for the vendoring suites: a script, a stylesheet whose @font-face
 * names a font by a relative URL, the font, an image; and the hostile answers: a body larger
 * than any file may be, a redirect loop, an answer that never comes. Plinth reaches it only
 * through PLINTH_FETCH_ALLOW_HOSTS (`env`), and the requests it gets are counted by path.
 */
import { existsSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { PNG } from './factories.ts'

/** A real font for browsers to apply (Debian's Chromium brings DejaVu or Liberation); plain bytes elsewhere. */
const FONT_FILES = ['/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf', '/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf']
const fontFile = FONT_FILES.find((file) => existsSync(file))
export const FONT = fontFile ? readFileSync(fontFile) : Buffer.from('not a real font')
export const HAS_REAL_FONT = fontFile !== undefined

export const SCRIPT = "document.documentElement.dataset.vendoredScript = 'ran'\n"
export const STYLESHEET =
  "@font-face { font-family: 'Vendored Mono'; src: url(../fonts/mono.ttf) format('truetype'); }\nbody { font-family: 'Vendored Mono', serif; color: rgb(1, 2, 3); }\n"

export interface VendorHost {
  origin: string
  /** The setting that lets Plinth fetch from this host. */
  env: { PLINTH_FETCH_ALLOW_HOSTS: string }
  hits: Map<string, number>
  close(): Promise<void>
}

export async function startVendorHost(): Promise<VendorHost> {
  const hits = new Map<string, number>()
  const stalled = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const send = (type: string, body: string | Buffer) => res.writeHead(200, { 'content-type': type }).end(body)
    if (path === '/lib/app.js') return send('application/javascript', SCRIPT)
    if (path === '/css/site.css') return send('text/css; charset=utf-8', STYLESHEET)
    if (path === '/fonts/mono.ttf') return send('font/ttf', FONT)
    if (path === '/img/logo.png' || /^\/img\/\d+\.png$/.test(path)) return send('image/png', PNG)
    if (path === '/huge.js') {
      // Far more than any file may hold, sent until the reader stops.
      res.writeHead(200, { 'content-type': 'application/javascript' })
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      const pump = () => {
        while (res.write(chunk)) if (res.writableLength > 1 << 20) break
      }
      res.on('drain', pump)
      res.on('close', () => res.off('drain', pump))
      return pump()
    }
    if (path === '/loop.js') return res.writeHead(302, { location: '/loop.js' }).end()
    if (path === '/slow.js') {
      stalled.add(res)
      res.on('close', () => stalled.delete(res))
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    env: { PLINTH_FETCH_ALLOW_HOSTS: new URL(origin).host },
    hits,
    close: () => {
      for (const res of stalled) res.destroy()
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A page naming the host's script, stylesheet and image, as a site built against a CDN does. */
export function vendoredPage(origin: string, title = 'Vendored'): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<link rel="stylesheet" href="${origin}/css/site.css" crossorigin="anonymous">
<script src="${origin}/lib/app.js" defer></script></head>
<body><h1>${title}</h1><img src="${origin}/img/logo.png" alt="Logo" width="1" height="1"></body></html>`
}
