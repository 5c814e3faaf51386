#!/usr/bin/env node
// The `plinth` admin command. It runs the compiled CLI in dist/, as `npm start` runs the compiled
// server, building it first when it is missing or out of date (scripts/build.js).
import { ensureBuilt } from '../scripts/build.js'

await ensureBuilt()
const { run } = await import('../dist/cli/main.js')
process.exitCode = await run(process.argv.slice(2))
