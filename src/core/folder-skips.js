/**
 * What a deploy leaves out of a folder, in one place for every way a folder is deployed: the
 * `plinth deploy` command (client/site-folder.ts), a `.zip` sent to the dashboard
 * (publishing/zip-bundle.ts), and the dashboard's drop area, whose script loads this very file in
 * the browser (`/assets/folder-skips.js`). Plain JavaScript with no imports, so that Node and the
 * browser run the same code; its types are in folder-skips.d.ts.
 *
 * Skipped: names starting with a dot (`.git`, `.DS_Store`, `.env`), except `.well-known`;
 * `node_modules`; and whatever `.plinthignore` at the folder's root names, in .gitignore syntax
 * (read by the `ignore` package, which the browser is served too).
 */

/** The ignore file read at a deployed folder's root. */
export const IGNORE_FILE = '.plinthignore'

/** Entries a folder (or an archive) may hold at most: past this it is not a built site (a project root, a home folder). */
export const MAX_FOLDER_ENTRIES = 10_000

const ALWAYS_SKIPPED = new Set(['node_modules'])
const KEPT_DOTFILES = new Set(['.well-known'])

/** Whether a file or folder of this name is skipped wherever it is. */
export function skipsName(name) {
  return ALWAYS_SKIPPED.has(name) || (name.startsWith('.') && !KEPT_DOTFILES.has(name))
}

/**
 * Whether the file at `path` (bundle path, forward slashes) is skipped: its name or a folder on
 * its way is skipped by name, or `rules` (the `.plinthignore` as an `ignore` instance, or null)
 * ignores the file or a folder on its way. A folder walk that stops at a skipped folder skips
 * exactly the same files.
 */
export function skipsPath(path, rules) {
  const segments = path.split('/')
  for (let i = 0; i < segments.length; i++) {
    const folder = i < segments.length - 1
    const relative = segments.slice(0, i + 1).join('/')
    if (skipsName(segments[i]) || (rules !== null && rules.ignores(folder ? `${relative}/` : relative))) return true
  }
  return false
}
