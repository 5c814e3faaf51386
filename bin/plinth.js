#!/usr/bin/env node
// The `plinth` admin command. TypeScript sources run through tsx, as `npm start` does.
import { register } from 'tsx/esm/api'

register()
const { run } = await import('../src/cli/main.ts')
process.exitCode = await run(process.argv.slice(2))
