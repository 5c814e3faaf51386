/**
 * Zip archives made byte by byte for tests, honest or hostile: entries stored or deflated, with
 * any name (`../x` included), any Unix mode (a symbolic link), and sizes that may lie. Zip
 * libraries refuse to write such archives, which is why this one writes the format itself
 * (APPNOTE.TXT: local headers, the central directory, its end record).
 */
import { crc32, deflateRawSync } from 'node:zlib'

export interface ZipEntry {
  name: string
  data?: Buffer | string
  /** Deflate the data (default) or store it. */
  deflate?: boolean
  /** Unix mode in the external attributes (0o100644 for a file by default; 0o120777 is a symbolic link). */
  mode?: number
  /** The uncompressed size the headers declare, when it should not be the true one. */
  declaredSize?: number
}

export function makeZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8')
    const data = Buffer.from(entry.data ?? '')
    const folder = entry.name.endsWith('/')
    const method = entry.deflate === false || folder ? 0 : 8
    const body = method === 8 ? deflateRawSync(data) : data
    const size = entry.declaredSize ?? data.length
    const crc = crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x0800, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt16LE(0, 10)
    local.writeUInt16LE(0x21, 12)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(body.length, 18)
    local.writeUInt32LE(size, 22)
    local.writeUInt16LE(name.length, 26)
    local.writeUInt16LE(0, 28)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE((3 << 8) | 20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(0x0800, 8)
    central.writeUInt16LE(method, 10)
    central.writeUInt16LE(0, 12)
    central.writeUInt16LE(0x21, 14)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(body.length, 20)
    central.writeUInt32LE(size, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(((entry.mode ?? (folder ? 0o40755 : 0o100644)) << 16) >>> 0, 38)
    central.writeUInt32LE(offset, 42)
    locals.push(local, name, body)
    centrals.push(central, name)
    offset += local.length + name.length + body.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}
