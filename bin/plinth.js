#!/usr/bin/env node
// The `plinth` command. `login`, `logout`, `deploy`, `sites`, `versions`, `promote` and `open` work with a server
// over its REST API from any machine and load no server code (dist/client/); every other command
// administers the instance whose settings are in the environment (dist/cli/). Both run compiled
// JavaScript, built first when dist/ is missing or out of date (scripts/build.js).
import { ensureBuilt } from '../scripts/build.js'

const CLIENT_COMMANDS = new Set(['login', 'logout', 'deploy', 'sites', 'versions', 'promote', 'open'])

await ensureBuilt()
const args = process.argv.slice(2)
const { run } = CLIENT_COMMANDS.has(args[0] ?? '') ? await import('../dist/client/main.js') : await import('../dist/cli/main.js')
process.exitCode = await run(args)
