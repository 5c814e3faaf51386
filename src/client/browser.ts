/**
 * Opening a URL in the person's browser: the BROWSER variable names the command when set, else
 * the system's opener (`open` on macOS, `start` on Windows, `xdg-open` where a desktop session
 * runs). A machine with neither (a server, a container, an SSH session) has no browser to open.
 */
import { spawn } from 'node:child_process'

/** The command that opens a URL here, or null when there is no browser to open. */
export function browserCommand(env: NodeJS.ProcessEnv): string[] | null {
  if (env.BROWSER) return [env.BROWSER]
  if (process.platform === 'darwin') return ['open']
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""']
  return env.DISPLAY || env.WAYLAND_DISPLAY ? ['xdg-open'] : null
}

/** Opens `url` when a browser command exists (without waiting for it); whether one was started. */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  const command = browserCommand(env)
  if (command === null) return false
  const [program, ...args] = command as [string, ...string[]]
  const opener = spawn(program, [...args, url], { stdio: 'ignore', detached: true })
  // A command that cannot start: the caller prints the URL all the same.
  opener.on('error', () => {})
  opener.unref()
  return true
}
