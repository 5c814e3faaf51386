/**
 * A stand-in for the program BROWSER names: a script that notes the URL it is asked to open in a
 * file, which the test then reads. The script writes aside and renames, so the file never exists
 * half-written.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/** How long a command may take to hand a URL over. */
const WAIT_MS = 30_000
const POLL_MS = 50

export class StandInBrowser {
  /** The script to set as BROWSER. */
  readonly command: string
  private readonly opened: string

  /** Keeps its script and its note in `dir`. */
  constructor(dir: string) {
    this.command = path.join(dir, 'browser.sh')
    this.opened = path.join(dir, 'opened-url')
    writeFileSync(this.command, `#!/bin/sh\nprintf '%s' "$1" > "${this.opened}.part" && mv "${this.opened}.part" "${this.opened}"\n`)
    chmodSync(this.command, 0o755)
  }

  /** Forgets the URL opened last. */
  reset(): void {
    rmSync(this.opened, { force: true })
  }

  /** The URL it was asked to open, once it has been. */
  async openedUrl(): Promise<string> {
    for (let waited = 0; !existsSync(this.opened); waited += POLL_MS) {
      if (waited >= WAIT_MS) throw new Error(`no URL was opened within ${WAIT_MS / 1000} s`)
      await sleep(POLL_MS)
    }
    return readFileSync(this.opened, 'utf8')
  }
}
