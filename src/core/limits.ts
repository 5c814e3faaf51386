/**
 * Every limit Plinth enforces on what clients send, declared once. Schemas, services, error
 * messages, OpenAPI descriptions and MCP tool descriptions all read them from here, so changing a
 * limit is a one-line change.
 */

const KiB = 1024
const MiB = 1024 * KiB

/** A byte count as people read it: `2 MiB`, `500 KiB`, `300 bytes`. */
export function formatSize(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`
  return `${bytes} bytes`
}

/** What one published bundle may hold. */
export interface BundleLimits {
  maxFiles: number
  maxFileBytes: number
  maxBundleBytes: number
  maxHtmlPages: number
  /** Most violations listed in one PUBLISH_INVALID (every code still appears at least once). */
  maxViolations: number
}

/** The interface's bundle limits: what an instance enforces unless its operator sets others (config.ts). */
export const BUNDLE_LIMITS: Readonly<BundleLimits> = Object.freeze({
  maxFiles: 40,
  maxFileBytes: 2 * MiB,
  maxBundleBytes: 8 * MiB,
  maxHtmlPages: 15,
  maxViolations: 100,
})

/**
 * How far an operator may move each bundle limit. A publish holds its whole bundle in memory and
 * records its files in one statement, and the JSON body (see maxBodyBytes) must stay a string V8
 * can hold.
 */
export const BUNDLE_LIMIT_RANGES = Object.freeze({
  maxFiles: { min: 1, max: 1000 },
  maxHtmlPages: { min: 1, max: 1000 },
  maxFileBytes: { min: KiB, max: 64 * MiB },
  maxBundleBytes: { min: KiB, max: 128 * MiB },
} satisfies Partial<Record<keyof BundleLimits, { min: number; max: number }>>)

/** Longest bundle path, in characters, and longest path segment, in UTF-8 bytes. */
export const MAX_PATH_CHARS = 1024
export const MAX_SEGMENT_BYTES = 255

/** Longest Host value that can name a site (a 253-character name and a port): longer ones are not parsed, nor remembered. */
export const MAX_HOST_CHARS = 320

/**
 * Largest JSON body: twice the largest bundle (an 8 MiB bundle of binaries is ~10.7 MiB as base64,
 * plus JSON around it), and never less than 16 MiB, which other requests (entry batches) may need.
 */
export function maxBodyBytes(limits: BundleLimits): number {
  return Math.max(16 * MiB, 2 * limits.maxBundleBytes)
}

/** Most per-field messages in one VALIDATION_FAILED. */
export const MAX_ERROR_FIELDS = 100

/** listWebsites answers with at most this many websites. */
export const WEBSITE_LIST_LIMIT = 50

/** Collections per website, fields per collection, entries per upsertEntries batch. */
export const MAX_COLLECTIONS = 50
export const MAX_FIELDS = 50
export const MAX_BATCH = 100

/** Version pages of the MCP tools get_website and list_versions: default and largest page size. */
export const VERSION_PAGE_DEFAULT = 10
export const VERSION_PAGE_MAX = 50

/** listEntries pages: default and largest page size. */
export const ENTRY_PAGE_DEFAULT = 20
export const ENTRY_PAGE_MAX = 100

/** A text field's default maximum length, in characters. */
export const TEXT_FIELD_DEFAULT_MAX = 10_000

/**
 * Longest rich-text source (markdown or HTML) accepted, in characters: four times a very long
 * article, and short enough that a worker renders it well within RICH_TEXT_TIME_LIMIT_MS and
 * RICH_TEXT_MEMORY_MB even when the markup is nothing but tiny elements
 * (docs/benchmarks.md#rich-text-limits has the measurements).
 */
export const RICH_TEXT_MAX_CHARS = 250_000

/** Rich-text characters one upsertEntries batch may hold in all; items past it fail alone (RICH_TEXT_BUDGET_EXCEEDED). */
export const RICH_TEXT_BATCH_MAX_CHARS = 2_000_000

/** Time one rich-text value may take to render in its worker thread, and the heap of each thread. */
export const RICH_TEXT_TIME_LIMIT_MS = 5_000
export const RICH_TEXT_MEMORY_MB = 256

/** Longest URL accepted (image fields, baseUrl, importAsset). */
export const URL_MAX_CHARS = 2048

/**
 * Uploads: files per createUploads call and bytes per file are the bundle's (maxFiles,
 * maxFileBytes), as is the largest image kept in a site's image library (maxFileBytes). How long
 * the signed URL and the upload last:
 */
export const UPLOAD_URL_LIFETIME_MS = 15 * 60 * 1000
export const UPLOAD_RETENTION_MS = 24 * 60 * 60 * 1000
/** How often a server removes expired uploads and the bytes only they held. */
export const UPLOAD_SWEEP_INTERVAL_MS = 60 * 60 * 1000

/** A site password's length, in characters (decisions: 8 to 200). */
export const SITE_PASSWORD_MIN = 8
export const SITE_PASSWORD_MAX = 200

/**
 * Sign-ins, password changes, OAuth client registrations and editor invitations are counted over
 * this sliding window (auth/guess-throttle.ts).
 */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000
/** Failed sign-ins and password changes in a window after which an account, or a client address, must wait. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 5
export const SIGN_IN_FAILURES_PER_ADDRESS = 20
/** OAuth dynamic client registrations one client address may make in a window. */
export const OAUTH_REGISTRATIONS_PER_ADDRESS = 10
/** Editors one account may invite (add by email) in a window. */
export const INVITATIONS_PER_ACCOUNT = 20
/** Invitations a site may hold that nobody has taken up yet. */
export const PENDING_INVITATIONS_PER_SITE = 50

/**
 * What a registered OAuth client's metadata may hold: the longest client_name, the longest URI
 * (or any other text value), and the most members of any list (redirect_uris, contacts, ...).
 */
export const OAUTH_CLIENT_NAME_MAX_CHARS = 100
export const OAUTH_CLIENT_URI_MAX_CHARS = URL_MAX_CHARS
export const OAUTH_CLIENT_LIST_MAX = 10
/**
 * A registered OAuth client nobody connected is removed after this long (registration is open),
 * by a sweep that runs at start and every OAUTH_CLIENT_SWEEP_INTERVAL_MS: within a day.
 */
export const OAUTH_UNUSED_CLIENT_TTL_SECONDS = 23 * 60 * 60
export const OAUTH_CLIENT_SWEEP_INTERVAL_MS = 60 * 60 * 1000

/** An account's password, in characters: scrypt reads all of it, so a bound keeps one sign-in from costing more than another. */
export const ACCOUNT_PASSWORD_MIN = 8
export const ACCOUNT_PASSWORD_MAX = 1024

/** Longest email address (RFC 5321's path limit less its brackets). */
export const EMAIL_MAX_CHARS = 254

/** Longest display name: a person's, a token's, a site's, a collection's or a field's label. */
export const DISPLAY_NAME_MAX_CHARS = 120

/** Longest id or version number a path or body may name (ids are far shorter: longer ones name nothing). */
export const ID_MAX_CHARS = 100

/** A site's description and a version's changelog message, in characters. */
export const WEBSITE_DESCRIPTION_MAX_CHARS = 5000
export const VERSION_MESSAGE_MAX_CHARS = 2000

/** Longest media type a file or upload may declare, and longest upload file name. */
export const CONTENT_TYPE_MAX_CHARS = 200
export const UPLOAD_FILENAME_MAX_CHARS = 255

/** Longest page cursor a client may send back. */
export const CURSOR_MAX_CHARS = 200

/** A choice field: most options, and longest option, in characters. */
export const CHOICE_OPTIONS_MAX = 200
export const CHOICE_OPTION_MAX_CHARS = 200
/** The largest maxLength a text field may declare, and longest help text of a field. */
export const TEXT_FIELD_MAX_LIMIT = 100_000
export const FIELD_HELP_TEXT_MAX_CHARS = 500
/** Longest collection name and field name. */
export const COLLECTION_NAME_MAX_CHARS = 40
export const FIELD_NAME_MAX_CHARS = 40
/** Longest entry slug and longest date-time string (publishedAt, createdAt) of an entry. */
export const ENTRY_SLUG_MAX_CHARS = 80
export const DATE_TIME_MAX_CHARS = 40

/** Domains one site may have: enough for the bare domain, www and a few others. */
export const DOMAINS_PER_SITE = 10
/** A claim never verified stops holding its domain after this long: nobody can park a domain they do not control. */
export const PENDING_CLAIM_DAYS = 7
/** A domain name's longest form and longest label, in characters (DNS's limits). */
export const DOMAIN_MAX = 253
export const DOMAIN_LABEL_MAX = 63

/**
 * Time a site template's render may take in its thread. LiquidJS's renderLimit, checked between
 * template nodes, is set to a share of it (site-templates.pool.ts), so it stops an ordinary
 * runaway template first, with its own message.
 */
export const TEMPLATE_TIME_LIMIT_MS = 5_000
/** Heap of each template thread: a render's own data is bounded by LiquidJS's memoryLimit, the rest holds parsed templates. */
export const TEMPLATE_MEMORY_MB = 256
/** Time one file's content rules may take: a maximal file (2 MiB of HTML) takes a small fraction of it. */
export const CONTENT_SCAN_TIME_LIMIT_MS = 10_000
/** Heap of each content-rules thread: a parse5 tree of a maximal file is well under it. */
export const CONTENT_SCAN_MEMORY_MB = 512

/**
 * Drafts: open at once per website; how long a draft nobody writes to is kept (the default of the
 * PLINTH_DRAFT_TTL_DAYS setting).
 */
export const DRAFTS_PER_SITE = 5
export const DRAFT_TTL_DAYS_DEFAULT = 7
/** Expired drafts are invisible at once; a server removes them at start and this often. */
export const DRAFT_SWEEP_INTERVAL_MS = 60 * 60 * 1000

/** Edits in one edit_file call or one `edit` change. */
export const MAX_EDITS = 50

/**
 * Text the edits of one request may read in all (characters): each edit reads the whole file it
 * changes, so this bounds the work a request's edits are, whatever their count and the files' size
 * (32 edits of a 2 MiB file, or one of a 64 MiB file).
 */
export const EDIT_READ_MAX_CHARS = 64 * MiB

/**
 * Comparing two versions: text files up to this size get a unified diff, whose length is capped;
 * the comparison stops after this many changed lines or this much time, and says the diff is too
 * large to show instead.
 */
export const TEXT_DIFF_LIMITS = { maxInputBytes: 512 * KiB, maxDiffChars: 64 * KiB, maxEditLines: 5000, timeoutMs: 100 } as const

/** Lines one read of a text file may ask for (`limit`); a read without a range answers the whole file. */
export const READ_LINES_MAX = 2000

/**
 * Changes in one patch: as many as files the largest bundle an operator may allow holds
 * (BUNDLE_LIMIT_RANGES.maxFiles), so a patch can rewrite every file of any site.
 */
export const MAX_CHANGES = 1000

/**
 * One comparison as a whole: the unified diffs it returns together, and the time spent making
 * them; files past either get `diffTruncated` instead, so a comparison of many large files costs
 * no more than a few.
 */
export const COMPARISON_LIMITS = { maxTotalDiffChars: 512 * KiB, maxTotalMs: 1000 } as const

/**
 * Bringing a bundle's external files into it (`vendor`): the most files fetched, how long one
 * fetch (every redirect, the headers and the body) and all of them together may take, the
 * redirects one may follow, how deep stylesheets that `@import` stylesheets are followed, and how
 * many fetches run at once. Bytes are the bundle's: a copy is at most maxFileBytes, and the
 * bundle with its copies at most maxBundleBytes, as is their count at most maxFiles.
 */
export const VENDOR_LIMITS = Object.freeze({
  maxFiles: 100,
  fetchTimeoutMs: 15_000,
  totalTimeoutMs: 60_000,
  maxRedirects: 5,
  maxDepth: 4,
  concurrency: 4,
})
export type VendorLimits = { -readonly [K in keyof typeof VENDOR_LIMITS]: number }

/**
 * The browser that loads published pages for screenshots and reports (browser/): seconds one page
 * may take from navigation to its screenshot by default, and the range an instance may set
 * (past it the page is stopped, PAGE_UNRESPONSIVE; its load event must come within two thirds of
 * it), heap of each page's JavaScript, pages waiting for a free slot beyond which a request is
 * BROWSER_BUSY (retry after BROWSER_RETRY_SECONDS), and what the result cache holds.
 */
export const BROWSER_PAGE_SECONDS_DEFAULT = 15
export const BROWSER_PAGE_SECONDS_RANGE = { min: 3, max: 300 } as const
export const BROWSER_PAGE_MEMORY_MB = 256
export const BROWSER_PAGES_DEFAULT = 2
export const BROWSER_QUEUE_MAX = 16
export const BROWSER_RETRY_SECONDS = 5
export const BROWSER_CACHE_BYTES = 64 * MiB
export const BROWSER_CACHE_TTL_MS = 10 * 60 * 1000
/** A full-page screenshot is cut at this height, in CSS pixels. */
export const BROWSER_FULL_PAGE_MAX_HEIGHT = 10_000
/** Console errors, failed requests and policy violations one report lists at most, each. */
export const BROWSER_REPORT_MAX_ITEMS = 50

/**
 * Forms on published sites. What a publish records: forms per version, fields per form, a field
 * name's length. What one submission may hold (`POST /_forms/{name}`): fields, a field's value,
 * the whole body without files, files and their bytes; more is 413 or 422 and stores nothing.
 */
export const FORM_DECLARATION_LIMITS = Object.freeze({ maxForms: 50, maxFields: 100, maxFieldNameChars: 100 })
export const FORM_SUBMISSION_LIMITS = Object.freeze({
  maxFields: 100,
  maxFieldNameChars: 100,
  maxValueBytes: 16 * KiB,
  maxFieldBytes: 128 * KiB,
  maxFiles: 5,
  maxFileBytes: 5 * MiB,
  maxFilesBytes: 10 * MiB,
})
/** The largest request body a form post may have: its fields, its files and the multipart framing around them. */
export const FORM_BODY_MAX_BYTES = FORM_SUBMISSION_LIMITS.maxFieldBytes + FORM_SUBMISSION_LIMITS.maxFilesBytes + 64 * KiB
/** The time a form post's body may take to arrive: a post held open longer is refused (408), so no client keeps its bytes in memory for long. */
export const FORM_BODY_SECONDS = 60
/**
 * Submissions taken per minute, per site (from everyone) and per client address (to any site):
 * a post over either waits (429 with Retry-After).
 */
export const FORM_RATE_LIMITS = Object.freeze({ perSitePerMinute: 60, perAddressPerMinute: 10 })
/** Submissions one listing page holds at most, and by default. */
export const FORM_SUBMISSIONS_PAGE_MAX = 100
export const FORM_SUBMISSIONS_PAGE_DEFAULT = 25
/** Longest text the inbox searches for. */
export const FORM_SEARCH_MAX_CHARS = 200
/** Addresses a site's submissions may be e-mailed to, and the longest retention a site may set, in days. */
export const FORM_NOTIFY_MAX_ADDRESSES = 5
export const FORM_RETENTION_MAX_DAYS = 3650

/** Webhooks one site may have, and the longest URL and description of one. */
export const WEBHOOKS_PER_SITE = 10
export const WEBHOOK_URL_MAX_CHARS = 2000
export const WEBHOOK_DESCRIPTION_MAX_CHARS = 500
/** Deliveries a webhook's log lists, newest first. */
export const WEBHOOK_DELIVERIES_LISTED = 100
/** Delivered and failed deliveries are kept this long for the log, then removed (hourly). */
export const WEBHOOK_DELIVERY_RETENTION_DAYS = 30
/**
 * Seconds between a delivery's attempts (the default of PLINTH_WEBHOOK_RETRY_SCHEDULE): the
 * first retry 30 s after the first attempt, each wait longer than the one before, the last about
 * 24 hours after the first attempt; after the last retry fails, the delivery is failed.
 */
export const WEBHOOK_RETRY_SCHEDULE_DEFAULT = [30, 120, 600, 1800, 7200, 21600, 55200] as const
/** Time one attempt may take, connection to answer (the default of PLINTH_WEBHOOK_TIMEOUT_MS). */
export const WEBHOOK_TIMEOUT_MS_DEFAULT = 10_000
/** How often each instance looks for due deliveries (the default of PLINTH_WEBHOOK_POLL_MS). */
export const WEBHOOK_POLL_MS_DEFAULT = 1000
/** Deliveries one instance sends at once, and of those at most this many for one website's webhooks (one a webhook). */
export const WEBHOOK_SEND_CONCURRENCY = 8
export const WEBHOOK_SEND_PER_WEBSITE = 2
/** Bytes of an endpoint's answer read (and thrown away) at most. */
export const WEBHOOK_ANSWER_MAX_BYTES = 64 * KiB

/**
 * How long an idle keep-alive connection stays open. Longer than the idle timeouts of the proxies
 * and load balancers put in front (60 s for most): the proxy must be the one to close an idle
 * connection, or it may send a request on one the server is closing at that moment.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000

/**
 * Traffic visitors: the user agents one client address counts as distinct visitors of a site in
 * one flush (a household's browsers, not a flood of invented ones), and the distinct visitors kept
 * for a site and hour; past it, page views still count and the hour's visitors read as this many.
 */
export const TRAFFIC_AGENTS_PER_ADDRESS = 8
export const TRAFFIC_VISITORS_PER_HOUR = 10_000
