/**
 * The thread side of content-scans.pool.ts: runs the content rules on one file's text and returns
 * what they found. Loading the rules' parsers (parse5, css-tree, es-module-lexer, LiquidJS)
 * happens as the thread starts, not in the first task, whose time limit would count it.
 */
import type { PublishViolation } from '../core/errors.ts'
import { scanText, type TextScan } from './authoring-rules.ts'

scanText({ path: 'warm-up.html', contentType: 'text/html', text: '<!doctype html><title>t</title><style>p{}</style><script>1</script>' }, 1)

export default function contentScan({ scan, limit }: { scan: TextScan; limit: number }): PublishViolation[] {
  return scanText(scan, limit)
}
