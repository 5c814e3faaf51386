/** Loopback ports for tests. */
import net from 'node:net'

/** A loopback port nothing listens on right now: bound on 127.0.0.1, read, released. */
export async function freePort(): Promise<number> {
  const probe = net.createServer()
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as net.AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}
