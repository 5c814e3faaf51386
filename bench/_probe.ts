import { spawnChild, makeTempDir, cleanupAll } from './lib/children.ts'
import { plinthEnv, SITE_DOMAIN } from './lib/settings.ts'
import { api, siteGet } from './lib/http.ts'
import { fourKbPage } from './lib/content.ts'
import { compare } from './lib/load.ts'
import { writeFileSync } from 'node:fs'
try {
const dir = await makeTempDir('probe')
const p = await spawnChild('plinth', 'plinth-server.ts', plinthEnv(dir))
await api(p.port, p.info.token as string, 'POST', '/v1/websites', { category: 'other', slug: 'bench-page', files: [{ path: 'index.html', content: fourKbPage() }] })
const got = await siteGet(p.port, 'bench-page.' + SITE_DOMAIN)
writeFileSync(dir + '/b.html', got.body)
const b = await spawnChild('bare', 'bare-server.ts', { BENCH_BODY_FILE: dir + '/b.html', BENCH_ETAG: String(got.headers.etag) })
const headers = { host: 'bench-page.' + SITE_DOMAIN }
for (const c of [p, b]) {
  await compare([{ label: c.name + ' warm', url: c.info.address + '/', headers, pid: c.pid }], { connections: 50, warmupSeconds: 0, durationSeconds: 2, slices: 1 })
  await c.ask('profile-start', { intervalUs: 100 })
  await compare([{ label: c.name, url: c.info.address + '/', headers, pid: c.pid }], { connections: 50, warmupSeconds: 0, durationSeconds: 4, slices: 1 })
  await c.ask('profile-stop', { file: `/tmp/prof-${c.name}.cpuprofile` })
}
} finally { await cleanupAll() }
