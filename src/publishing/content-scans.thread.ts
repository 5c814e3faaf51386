/**
 * The thread side of content-scans.pool.ts: runs the content rules on the texts of one batch of
 * files and returns what they found, file by file. Loading the rules' parsers (parse5, css-tree,
 * es-module-lexer, LiquidJS) happens as the thread starts, not in the first task, whose time limit
 * would count it.
 */
import type { PublishViolation } from '../core/errors.ts'
import { scanText, scanTexts, type TextScan } from './content-rules.ts'

scanText({ path: 'warm-up.html', contentType: 'text/html', text: '<!doctype html><title>t</title><style>p{}</style><script>1</script>' }, 1)

export default function contentScans({ scans, limit }: { scans: TextScan[]; limit: number }): PublishViolation[][] {
  return scanTexts(scans, limit)
}
