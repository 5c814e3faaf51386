/**
 * The services every surface calls (REST, MCP, the web site, the admin CLI): what compose.ts
 * builds for them, by name.
 */
import type { PromotionRequests } from './approvals/promotion-requests.ts'
import type { PromotionSchedules } from './approvals/promotion-schedules.ts'
import type { AccountsService } from './auth/accounts.service.ts'
import type { TokensService } from './auth/tokens.service.ts'
import type { PageViews } from './browser/page-views.ts'
import type { CollectionsService } from './content/collections.service.ts'
import type { EntriesService } from './content/entries.service.ts'
import type { ServerSecrets } from './db/server-secrets.ts'
import type { DomainsService } from './domains/domains.service.ts'
import type { ServedDomains } from './domains/served-domains.ts'
import type { DraftFiles } from './drafts/draft-files.ts'
import type { DraftsService } from './drafts/drafts.service.ts'
import type { FormsSetup } from './forms/forms.setup.ts'
import type { AssetsService } from './images/assets.service.ts'
import type { OAuthService } from './oauth/oauth.service.ts'
import type { UploadsService } from './uploads/uploads.service.ts'
import type { UsersService } from './users/users.service.ts'
import type { JobDetails } from './websites/job-details.ts'
import type { MembersService } from './websites/members.service.ts'
import type { SitePasswords } from './websites/site-passwords.ts'
import type { SlugClaims } from './websites/slug-claims.ts'
import type { VersionFiles } from './websites/version-files.ts'
import type { VersionPatches } from './websites/version-patches.ts'
import type { VersionPromoter } from './websites/version-promotion.ts'
import type { WebsiteDeletion } from './websites/website-deletion.ts'
import type { WebsitePublishing } from './websites/website-publishing.ts'
import type { WebsiteQueries } from './websites/website-queries.ts'
import type { Webhooks } from './webhooks/webhooks.ts'
import type { TrafficService } from './traffic/traffic.service.ts'

/** The services every surface (REST, MCP, CLI) calls. */
export interface Services {
  users: UsersService
  /** People on the web site: sign-up, sign-in, sessions. */
  accounts: AccountsService
  /** Keys shared by every instance (upload URLs, CSRF tokens, OAuth). */
  secrets: ServerSecrets
  /** Sign-in from MCP clients: consent, connected apps. */
  oauth: OAuthService
  tokens: TokensService
  /** Websites and their versions, as their owners and editors read them. */
  websites: WebsiteQueries
  /** Publishing a new website or a new version of one. */
  publishing: WebsitePublishing
  /** A new version from the whole bundle or from changes to a base version (createWebsiteVersion). */
  patches: VersionPatches
  /** Making a stored version live: review and rollback. */
  promotion: VersionPromoter
  /** A version's files read back, and two versions (or a version and a draft) compared. */
  versionFiles: VersionFiles
  /** Deleting a website for good (owner only). */
  deletion: WebsiteDeletion
  /** Publish jobs, as getJob answers them and as their status pages show them. */
  jobDetails: JobDetails
  /** Site addresses: suggestSlug, and the claims a new website makes. */
  slugs: SlugClaims
  /** A website's owner, editors and invitations. */
  members: MembersService
  /** Site passwords: set by owners and editors, checked for the site server's password page. */
  sitePasswords: SitePasswords
  uploads: UploadsService
  collections: CollectionsService
  entries: EntriesService
  assets: AssetsService
  /** Drafts of a site: started from a version, published as the next one. */
  drafts: DraftsService
  /** The files of a draft, written, edited, moved and read one at a time. */
  draftFiles: DraftFiles
  /** Custom domains: managed on the dashboard only. */
  domains: DomainsService
  /** Which site a custom domain serves, and whether the TLS proxy may get a certificate for a host. */
  servedDomains: ServedDomains
  /** Screenshots and browser reports of a version's or a draft's pages, in a browser started on first use. */
  pageViews: PageViews
  /** Forms of published sites: their submissions, as owners and editors read them. */
  forms: FormsSetup['service']
  /** A site's webhooks and their delivery logs (owner only). */
  webhooks: Webhooks['service']
  /** Requests that a person make a version live, decided on the dashboard. */
  promotionRequests: PromotionRequests
  /** Promotions at a set time, and preview expiry. */
  schedules: PromotionSchedules
  /** A site's traffic, as the site server counted it (owners and editors). */
  traffic: TrafficService
}
