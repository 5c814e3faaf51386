/**
 * Benchmark child: the baseline. A bare node:http server sending the same bytes from memory, the
 * way Plinth's site handler does (res.writeHead with a flat header list, then res.end(bytes)).
 *   GET /      -> Content-Type, Content-Length, ETag only
 *   GET /full  -> exactly the header list Plinth sent for the same page (BENCH_FULL_HEADERS)
 * Same launch as the Plinth child (node --import tsx), listening on 127.0.0.1 only.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { serveIpc } from './lib/child-ipc.ts'

const body = readFileSync(process.env.BENCH_BODY_FILE as string)
const etag = process.env.BENCH_ETAG as string
const minimal = ['Content-Type', 'text/html; charset=utf-8', 'Content-Length', String(body.length), 'ETag', etag]
const full: string[] = process.env.BENCH_FULL_HEADERS ? JSON.parse(process.env.BENCH_FULL_HEADERS) : minimal

const server = http.createServer((req, res) => {
  res.writeHead(200, req.url === '/full' ? full : minimal)
  res.end(body)
})

serveIpc({}, async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  console.log(JSON.stringify({ ready: true, address: `http://127.0.0.1:${port}`, pid: process.pid }))
})
