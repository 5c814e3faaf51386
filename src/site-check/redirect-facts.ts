/**
 * The facts of `_redirects`: its rules, which answer paths that are no file, and the site paths
 * its rules send visitors to, which are links like any other (a rule's target that is no file is
 * a BROKEN_LINK; a file only a rule leads to is used).
 */
import type { RedirectRules } from '../publishing/redirect-rules.ts'
import type { FactsCollector } from './file-facts.ts'

export function noteRedirects(facts: FactsCollector, rules: RedirectRules): void {
  facts.redirects = rules
  for (const rule of rules.list) {
    // A target another site or a placeholder fills is not one path of this site.
    if (!rule.to.startsWith('/') || rule.to.includes(':') || rule.to.includes('*')) continue
    facts.reference(rule.to, 'link', rule.line)
  }
}
