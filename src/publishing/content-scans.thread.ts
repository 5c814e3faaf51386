/**
 * The thread side of content-scans.pool.ts: runs the content rules on the texts of one batch of
 * files and returns what they found, file by file (with each file's facts for the site check when
 * asked), or runs the site check of a whole bundle on those facts. Loading the rules' parsers
 * (parse5, css-tree, es-module-lexer, LiquidJS) and a first run of the check happen as the thread
 * starts, not in the first task, whose time limit would count them.
 */
import type { Warning } from '../core/schemas.ts'
import { checkSite, type SiteCheckInput } from '../site-check/site-check.ts'
import { type ScanOutcome, scanText, scanTexts, type TextScan } from './content-rules.ts'

const warmUp = scanText(
  { path: 'warm-up.html', contentType: 'text/html', text: '<!doctype html><title>t</title><style>p{}</style><script>1</script><a href=x.html>x</a>' },
  1,
  true,
)
checkSite({
  files: [{ path: 'warm-up.html', size: 1, contentType: 'text/html' }],
  facts: [{ path: 'warm-up.html', facts: warmUp.facts! }],
  ruleWarnings: [],
  collectionNames: [],
  pixels: [],
})

export type ContentScanTask = { scans: TextScan[]; limit: number; facts: boolean } | { site: SiteCheckInput }

export default function contentScans(task: ContentScanTask): ScanOutcome[] | Warning[] {
  return 'site' in task ? checkSite(task.site) : scanTexts(task.scans, task.limit, task.facts)
}
