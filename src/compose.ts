/**
 * The composition root: opens the stores and builds every service, the site server and the site
 * events once. The HTTP server and the CLI both start from here, so they run the same wiring.
 * Every collaborator is passed explicitly; nothing has a silent default.
 */
import { readFileSync } from 'node:fs'
import { type Approvals, setUpApprovals } from './approvals/approvals.ts'
import { AccountsService } from './auth/accounts.service.ts'
import { GuessThrottle } from './auth/guess-throttle.ts'
import { SessionsRepository } from './auth/sessions.repository.ts'
import { TokensRepository } from './auth/tokens.repository.ts'
import { TokensService } from './auth/tokens.service.ts'
import type { BlobStore } from './blobs/blob-store.ts'
import { describeSweep, type SweepResult, sweepBlobs } from './blobs/blob-sweep.ts'
import { BlobVariants, VARIANT_WORK } from './blobs/blob-variants.ts'
import { BlobsRepository } from './blobs/blobs.repository.ts'
import { PageViews } from './browser/page-views.ts'
import { InstrumentedBlobStore } from './blobs/instrumented-blob-store.ts'
import { openBlobStore } from './blobs/open-blob-store.ts'
import type { Config } from './config.ts'
import { CollectionsRepository } from './content/collections.repository.ts'
import { CollectionsService } from './content/collections.service.ts'
import { libraryMedia } from './content/entries.media.ts'
import { EntriesRepository } from './content/entries.repository.ts'
import { EntriesService } from './content/entries.service.ts'
import { WebsiteAccess } from './db/access.ts'
import { type Db, migrate, openDb } from './db/connect.ts'
import { DraftFiles } from './drafts/draft-files.ts'
import { DraftRecords } from './drafts/draft-records.ts'
import { DraftsRepository } from './drafts/drafts.repository.ts'
import { DraftsService } from './drafts/drafts.service.ts'
import { DNS_CHECK_TIMING, DnsChallengeChecker } from './domains/dns-check.ts'
import { domainRulesOf } from './domains/domain-names.ts'
import { DomainsRepository } from './domains/domains.repository.ts'
import { DomainsService } from './domains/domains.service.ts'
import { ServedDomains } from './domains/served-domains.ts'
import { ServerSecrets } from './db/server-secrets.ts'
import type { FormDigest } from './forms/form-digest.ts'
import { setUpForms } from './forms/forms.setup.ts'
import { clientAddressOf } from './http/client-address.ts'
import { AssetLibrary } from './images/asset-library.ts'
import { AssetsRepository } from './images/assets.repository.ts'
import { AssetsService } from './images/assets.service.ts'
import type { Logger } from './log.ts'
import { OAuthRepository } from './oauth/oauth.repository.ts'
import { OAuthEndpoint } from './oauth/oauth.routes.ts'
import { OAuthService } from './oauth/oauth.service.ts'
import { Metrics } from './ops/metrics.ts'
import { CONTENT_SCAN_RESULTS_KEPT, ContentScanResults } from './publishing/content-scan-results.ts'
import { PublishPipeline } from './publishing/publish-pipeline.ts'
import { safeVendorFetch } from './publishing/bundle-vendoring.ts'
import { DbSiteLookup } from './serving/db-site-lookup.ts'
import { createSiteEvents, servingHandlers, type SiteEventBus } from './serving/site-events.ts'
import { CustomHosts } from './serving/custom-hosts.ts'
import { SiteLock } from './serving/site-lock.ts'
import { MANIFEST_CACHE_LIMITS } from './serving/site-cache.ts'
import { createSiteServer, type SiteServer } from './serving/site-handler.ts'
import { SiteContentRepository } from './site-content/site-content.repository.ts'
import { SITE_PAGE_CACHE_BYTES, SiteContent } from './site-content/site-content.ts'
import { UploadsRepository } from './uploads/uploads.repository.ts'
import { UploadsService } from './uploads/uploads.service.ts'
import { UsersRepository } from './users/users.repository.ts'
import { UsersService } from './users/users.service.ts'
import { oauthPages } from './web/oauth-pages.ts'
import { DRAFT_ID_PREFIX } from './core/ids.ts'
import { THROTTLE_WINDOW_MS } from './core/limits.ts'
import { createPurgeHook } from './websites/purge-hook.ts'
import { SitePasswords } from './websites/site-passwords.ts'
import { SiteUnlocks } from './websites/site-unlocks.ts'
import { JobDetails } from './websites/job-details.ts'
import { PublishRateLimiter } from './websites/publish-rate-limit.ts'
import { InvitationsRepository } from './websites/invitations.repository.ts'
import { MembersService } from './websites/members.service.ts'
import { SlugClaims } from './websites/slug-claims.ts'
import { type FileSetSource, VersionFiles } from './websites/version-files.ts'
import { VersionPatches } from './websites/version-patches.ts'
import { VersionPromotion } from './websites/version-promotion.ts'
import { WebsiteDeletion } from './websites/website-deletion.ts'
import { WebsitePublishing } from './websites/website-publishing.ts'
import { WebsiteQueries } from './websites/website-queries.ts'
import { WebsitesRepository } from './websites/websites.repository.ts'
import type { Services } from './services.ts'
import { createWebhooks } from './webhooks/webhooks.ts'
import { createTraffic, type Traffic } from './traffic/traffic.ts'
import { closeWorkerPools, createWorkerPools, type WorkerPools } from './worker-pools.ts'

export type { Services } from './services.ts'

/** Everything one Plinth process runs on. */
export interface Composition {
  db: Db
  /** The OAuth authorization server for MCP clients. */
  oauth: OAuthService
  /** Its requests: the endpoints answered before Fastify, and the consent page's interaction steps. */
  oauthEndpoint: OAuthEndpoint
  /** The blob store, timed for the metrics. */
  blobs: BlobStore
  /** This process's Prometheus metrics (ops/metrics.ts): the blob store, publishes, the site caches and the database pool report here. */
  metrics: Metrics
  /** Makes the compressed variants of stored blobs; settled() resolves when none are being made. */
  blobVariants: BlobVariants
  /** Checks and stores every publish's bundle (the benchmark turns its site check off to measure it). */
  pipeline: PublishPipeline
  services: Services
  /** Serves published sites ({slug}.{site_domain}). */
  siteServer: SiteServer
  siteEvents: SiteEventBus
  /** Removes temp files and unreferenced blobs a crash left behind (blobs/blob-sweep.ts). */
  sweepBlobs(): Promise<SweepResult>
  /** The daily digest of form submissions (null without SMTP): sent by whichever instance claims the day. */
  formDigest: FormDigest | null
  /** Promotion requests, scheduled promotions and preview expiry; `schedules.runDue()` is the scheduler's tick. */
  approvals: Approvals
  /** Site traffic: what the site server counts, written every few seconds (`flush()` writes it at once). */
  traffic: Traffic
  /** Stops listening for site changes, stops the worker threads (unless shared) and closes the database. */
  close(): Promise<void>
}

export interface ComposeOptions {
  /** Whether to sweep and take up pending work at start, as a server does (a CLI command leaves that to the server). */
  sweepAtStart?: boolean
  /** Worker pools shared with other compositions of the process, closed by the caller (worker-pools.ts); a set of its own otherwise. */
  pools?: WorkerPools
  /** The clock of schedules, requests and preview expiry (tests move it); the system's otherwise. */
  now?: () => Date
}

/**
 * Opens the stores (running pending migrations) and builds everything on them. At start the blob
 * store is swept in the background (what a crash left behind), unless told not to (the CLI).
 */
export async function compose(config: Config, log: Logger, options: ComposeOptions = {}): Promise<Composition> {
  const db = openDb(config)
  const now = options.now ?? (() => new Date())
  let store: BlobStore
  try {
    await migrate(db)
    store = await openBlobStore(config, log)
  } catch (error) {
    await db.close()
    throw error
  }
  const metrics = new Metrics()
  const blobs = new InstrumentedBlobStore(store, metrics)
  const assetsRepo = new AssetsRepository(db.kysely)
  const collectionsRepo = new CollectionsRepository(db.kysely, db.dialect)
  const entriesRepo = new EntriesRepository(db.kysely)

  const secrets = new ServerSecrets(db.kysely)
  const websitesRepo = new WebsitesRepository(db.kysely)
  const sessionsRepo = new SessionsRepository(db.kysely)
  // Wrong sign-ins, password changes and site passwords, OAuth client registrations and editor
  // invitations, counted in the database by every instance alike.
  const guesses = new GuessThrottle(sessionsRepo, THROTTLE_WINDOW_MS)
  const siteLock = new SiteLock({
    key: await secrets.key('site_unlock_key'),
    secure: config.siteScheme === 'https',
    clientAddress: clientAddressOf(config.trustProxy),
    unlocker: new SiteUnlocks(websitesRepo, guesses),
  })

  const domainsRepo = new DomainsRepository(db.kysely)
  const domainRules = domainRulesOf(config)
  const servedDomains = new ServedDomains(domainsRepo, domainRules)
  // Verified custom domains, held in memory by serving (serving/custom-hosts.ts).
  const customHosts = new CustomHosts(servedDomains)
  await customHosts.load()

  // Content pages, a publish's content rules and rich text are worked on in worker threads, never on the event loop.
  const pools = options.pools ?? createWorkerPools()
  const { templates, contentScans, richText } = pools
  const blobRows = new BlobsRepository(db.kysely)
  // Compressed variants are made after the bytes are stored, off the request (blobs/blob-variants.ts).
  const blobVariants = new BlobVariants({ blobs, rows: blobRows, log, ...VARIANT_WORK })
  const access = new WebsiteAccess(db.kysely)
  const fetchCa = config.fetchCaFile ? readFileSync(config.fetchCaFile, 'utf8') : undefined
  // The outbox other features record their events to, in their transactions, and this instance's sender.
  const webhooks = await createWebhooks({ db, config, access, secrets, ca: fetchCa, log })
  const { outbox: webhookEvents } = webhooks
  const forms = setUpForms({ config, db, access, blobs, blobRows, variants: blobVariants, webhookEvents, log })
  const traffic = createTraffic({ db, config, access, clientAddress: clientAddressOf(config.trustProxy), now: () => now().getTime(), log })
  const siteServer = createSiteServer({
    traffic: traffic.counter,
    lock: siteLock,
    customHosts,
    forms: forms.intake,
    clientAddress: clientAddressOf(config.trustProxy),
    siteDomain: config.siteDomain,
    // The API and web site hosts are never site hosts, even when they sit under the site domain.
    serviceHosts: domainRules.serviceHosts,
    lookup: new DbSiteLookup(db.kysely),
    blobs,
    cacheBytes: config.serveCacheBytes,
    manifests: MANIFEST_CACHE_LIMITS,
    now: () => now().getTime(),
    log,
    content: new SiteContent({
      sources: { live: new SiteContentRepository(db.kysely), collections: collectionsRepo, entries: entriesRepo, assets: assetsRepo },
      blobs,
      scheme: config.siteScheme,
      siteDomain: config.siteDomain,
      log,
      templates,
      cacheBytes: SITE_PAGE_CACHE_BYTES,
    }),
  })
  metrics.watchServing(siteServer)
  if (db.poolUse) metrics.watchDatabasePool(db.poolUse)
  const siteEvents = await createSiteEvents(db, config.databaseUrl, servingHandlers(siteServer, customHosts, log), log)

  const purge = createPurgeHook(config.purgeUrl, config, log)
  const sitePasswords = new SitePasswords({ access, repo: websitesRepo, siteEvents, purge })
  const uploads = new UploadsService({ baseUrl: config.baseUrl, repo: new UploadsRepository(db.kysely), blobs, blobRows, blobVariants, secrets, log })
  const collections = new CollectionsService({ repo: collectionsRepo, access, siteEvents })
  const assetLibrary = new AssetLibrary({
    allowHosts: new Set(config.fetchAllowHosts),
    userAgent: `Plinth/1.0 (+${config.siteUrl})`,
    ca: fetchCa,
    repo: assetsRepo,
    blobs,
    blobRows,
    blobVariants,
    maxImageBytes: config.bundleLimits.maxFileBytes,
  })
  const assets = new AssetsService({ access, library: assetLibrary, uploads })
  const users = new UsersService(new UsersRepository(db.kysely))
  const oauth = new OAuthService({
    config,
    db: db.kysely,
    repo: new OAuthRepository(db.kysely),
    users,
    secrets,
    log,
    throttle: guesses,
    pages: oauthPages(config),
    fetchCa,
  })
  const oauthEndpoint = new OAuthEndpoint({ oauth, config, clientAddress: clientAddressOf(config.trustProxy), log })
  const slugs = new SlugClaims({ repo: websitesRepo, sites: config })
  const pipeline = new PublishPipeline({
    blobs,
    blobRows,
    variants: blobVariants,
    scans: contentScans,
    scanResults: new ContentScanResults(CONTENT_SCAN_RESULTS_KEPT),
    references: uploads,
    httpsSites: config.siteScheme === 'https',
    limits: config.bundleLimits,
  })
  const publishing = new WebsitePublishing({
    now,
    config,
    access,
    repo: websitesRepo,
    blobRows,
    pipeline,
    rateLimiter: new PublishRateLimiter(websitesRepo, config.publishRatePerMinute),
    slugs,
    siteEvents,
    purge,
    onPublished: (bytes) => metrics.published(bytes),
    collections: collectionsRepo,
    vendorFetch: safeVendorFetch({ allowHosts: new Set(config.fetchAllowHosts), userAgent: `Plinth/1.0 (+${config.siteUrl})`, ca: fetchCa }),
    webhookEvents,
  })
  const draftRecords = new DraftRecords({
    config,
    access,
    repo: new DraftsRepository(db.kysely),
    blobs,
    blobRows,
    pipeline,
    collections: collectionsRepo,
    siteEvents,
    ttlDays: config.draftTtlDays,
    now,
  })
  const drafts = new DraftsService({ config, records: draftRecords, versions: websitesRepo, publishing, log })
  // A draft's files are read back and compared as a version's are (websites/version-files.ts).
  const draftFileSets: FileSetSource = {
    prefix: DRAFT_ID_PREFIX,
    filesOf: async (principal, websiteId, draftId) => {
      const draft = await drafts.manifest(principal, websiteId, draftId)
      return { label: { kind: 'draft', id: draft.draftId, version: draft.baseVersion }, files: draft.files }
    },
  }
  const promotion = new VersionPromotion({ config, access, repo: websitesRepo, siteEvents, purge, collections: collectionsRepo, webhookEvents })
  const versionFiles = new VersionFiles({ access, repo: websitesRepo, blobs, otherSources: [draftFileSets] })
  const approvalsWith = { config, db, access, versions: websitesRepo, promotion, versionFiles, siteEvents, webhookEvents, mailer: forms.mail }
  const approvals = setUpApprovals({ ...approvalsWith, now, log })
  // A server sweeps expired OAuth rows, drafts and uploads at start and hourly, and sends webhook deliveries; a CLI command leaves that to it.
  if (options.sweepAtStart !== false) {
    await Promise.all([
      oauth.startSweeps(),
      drafts.startSweeps(),
      uploads.startSweeps(),
      forms.startSweeps(),
      webhooks.sender.start(),
      approvals.start(),
      traffic.start(),
    ])
  }
  const members = new MembersService({ access, sites: websitesRepo, invitations: new InvitationsRepository(db.kysely), throttle: guesses })
  const services: Services = {
    users,
    accounts: new AccountsService({ users, sessions: sessionsRepo, throttle: guesses, apps: oauth, invitations: members, signup: config.signup }),
    secrets,
    oauth,
    tokens: new TokensService({ repo: new TokensRepository(db.kysely), oauth }),
    websites: new WebsiteQueries({ config, access, repo: websitesRepo }),
    publishing,
    patches: new VersionPatches({ access, repo: websitesRepo, blobs, publishing }),
    // Every promote but an approval also approves the version's pending request (approvals.ts).
    promotion: approvals.promoter,
    versionFiles,
    deletion: new WebsiteDeletion({ access, repo: websitesRepo, blobs, blobRows, siteEvents, purge, webhookEvents }),
    jobDetails: new JobDetails(config, websitesRepo),
    slugs,
    members,
    sitePasswords,
    uploads,
    collections,
    entries: new EntriesService({ collections, repo: entriesRepo, media: libraryMedia(richText, assetLibrary, assets), siteEvents, webhookEvents }),
    drafts,
    draftFiles: new DraftFiles(draftRecords),
    domains: new DomainsService({
      repo: domainsRepo,
      access,
      rules: domainRules,
      checker: new DnsChallengeChecker({ servers: config.dnsServers, ...DNS_CHECK_TIMING }),
      events: siteEvents,
      scheme: config.siteScheme,
    }),
    servedDomains,
    assets,
    pageViews: new PageViews({ config, access, versions: websitesRepo, drafts, site: siteServer, log }),
    forms: forms.service,
    webhooks: webhooks.service,
    promotionRequests: approvals.requests,
    schedules: approvals.schedules,
    traffic: traffic.service,
  }
  const sweep = () => sweepBlobs(blobs, blobRows, {})
  const startSweep =
    options.sweepAtStart === false
      ? Promise.resolve()
      : sweep().then(
          (result) => log.info({ sweep: result }, `blob store swept at start: ${describeSweep(result)}`),
          (error) => log.error({ err: error }, 'sweeping the blob store at start failed'),
        )
  const resumeVariants =
    options.sweepAtStart === false
      ? Promise.resolve()
      : blobVariants.resumePending().then(
          () => {},
          (error) => log.error({ err: error }, 'resuming the pending compressed variants failed'),
        )
  return {
    db,
    oauth,
    oauthEndpoint,
    blobs,
    metrics,
    blobVariants,
    pipeline,
    services,
    siteServer,
    siteEvents,
    sweepBlobs: sweep,
    formDigest: forms.digest,
    approvals,
    traffic,
    async close() {
      await startSweep
      // Closed first, so that taking up what an earlier process left pending stops between batches.
      const closingVariants = blobVariants.close()
      await resumeVariants
      await closingVariants
      oauth.close()
      drafts.close()
      uploads.close()
      await services.pageViews.close()
      await approvals.close()
      await forms.close()
      await webhooks.sender.close()
      await siteEvents.close()
      // Written last of all the requests served: a clean stop loses no count.
      await traffic.close().catch((error: unknown) => log.error({ err: error }, 'writing the last traffic counts failed'))
      if (!options.pools) await closeWorkerPools(pools)
      await db.close()
      await blobs.close()
    },
  }
}
