/**
 * Custom domains on the serving side: which slug a verified custom domain serves, held in memory
 * so that the dispatch in front of the API (SiteServer.siteOf) stays synchronous. Loaded at
 * start; a domain verified or removed is read again when the site events say so (on every
 * instance), and everything is read again when those events may have been missed (resync).
 */

/** What serving asks about custom domains (implemented by the domains feature). */
export interface DomainDirectory {
  allServed(): Promise<Array<{ domain: string; slug: string }>>
  findServed(domain: string): Promise<{ slug: string } | null>
}

export class CustomHosts {
  private slugs = new Map<string, string>()
  /** Told whenever a mapping changes, so memoized host parses are dropped. */
  onChange: () => void = () => {}

  constructor(private readonly directory: DomainDirectory) {}

  /** The slug a custom domain (lowercase, no port) serves, undefined when it serves none. */
  slugOf(domain: string): string | undefined {
    return this.slugs.get(domain)
  }

  /** Reads every mapping afresh. */
  async load(): Promise<void> {
    const next = new Map<string, string>()
    for (const { domain, slug } of await this.directory.allServed()) next.set(domain, slug)
    this.slugs = next
    this.onChange()
  }

  /** Reads one domain's mapping again (verified, removed); the memoized host parses go only if it changed. */
  async refresh(domain: string): Promise<void> {
    const slug = (await this.directory.findServed(domain))?.slug
    if (slug === this.slugs.get(domain)) return
    if (slug === undefined) this.slugs.delete(domain)
    else this.slugs.set(domain, slug)
    this.onChange()
  }

  /** A site changed (maybe deleted): the domains that served it are read again. */
  async refreshSlug(slug: string): Promise<void> {
    const domains = [...this.slugs].filter(([, served]) => served === slug).map(([domain]) => domain)
    for (const domain of domains) await this.refresh(domain)
  }
}
