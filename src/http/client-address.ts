import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'

/** The client's address of a raw request: the connection's, or what the trusted proxies say (as Fastify's request.ip). */
export function clientAddressOf(trusted: readonly string[]): (req: IncomingMessage) => string {
  if (trusted.length === 0) return (req) => req.socket.remoteAddress ?? 'unknown'
  const trust = proxyAddr.compile([...trusted])
  return (req) => proxyAddr(req, trust)
}
