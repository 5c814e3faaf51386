/** Shapes of screenshots and browser reports: the single source for validation, types, OpenAPI and MCP. */
import { type Static, Type } from 'typebox'
import { VIEWPORTS } from '../core/enums.ts'
import { BROWSER_FULL_PAGE_MAX_HEIGHT, BROWSER_REPORT_MAX_ITEMS, MAX_PATH_CHARS } from '../core/limits.ts'
import { VIEWPORT_SIZES } from './viewports.ts'

const sizes = VIEWPORTS.map((name) => `${name} ${VIEWPORT_SIZES[name].width}x${VIEWPORT_SIZES[name].height}`).join(', ')

export const PagePathField = Type.String({
  minLength: 1,
  maxLength: MAX_PATH_CHARS,
  pattern: '^/[^\\u0000-\\u001f\\u007f]*$',
  description: 'The path of the page on the site, with its query if any: `/`, `/about.html`, `/posts-hello`. Default `/`.',
})
export const ViewportField = Type.Enum(VIEWPORTS, {
  description: `The window the page is loaded in (CSS pixels, one pixel each): ${sizes}. Default desktop.`,
})
export const FullPageField = Type.Boolean({
  description: `The whole page (up to ${BROWSER_FULL_PAGE_MAX_HEIGHT} pixels tall) rather than the window only. Default false.`,
})

/** What a request names of the page; a field left out takes its default (page-views.ts). */
export const PageFields = { path: Type.Optional(PagePathField), viewport: Type.Optional(ViewportField), fullPage: Type.Optional(FullPageField) }
export const ScreenshotQuery = Type.Object(PageFields, { additionalProperties: false })
export const BrowserReportQuery = Type.Object({ path: PageFields.path, viewport: PageFields.viewport }, { additionalProperties: false })

const listed = `at most ${BROWSER_REPORT_MAX_ITEMS}`

export const BrowserReportSchema = Type.Object(
  {
    path: Type.String(),
    viewport: Type.Enum(VIEWPORTS),
    status: Type.Integer({ description: "The HTTP status of the page's own answer." }),
    title: Type.String({ description: "The page's title, empty when it has none." }),
    loadMs: Type.Integer({ description: 'Milliseconds from navigation to the load event (or to the time limit, when the page never finished loading).' }),
    consoleErrors: Type.Array(Type.Object({ message: Type.String() }), {
      description: `Errors the page's scripts logged or threw, ${listed}.`,
    }),
    failedRequests: Type.Array(Type.Object({ url: Type.String(), reason: Type.String() }), {
      description: `Requests that got nothing (every request to another origin: pages load with no network but their own site) or an error status, ${listed}.`,
    }),
    policyViolations: Type.Array(Type.Object({ directive: Type.String(), blockedUrl: Type.String() }), {
      description: `What the Content-Security-Policy the site is served with (Plinth's, narrowed by its _headers) refused, ${listed}: blockedUrl is a URL, or inline or eval.`,
    }),
    horizontalOverflow: Type.Boolean({ description: 'Whether the page is wider than the window, so that it scrolls sideways.' }),
  },
  { $id: 'BrowserReport', additionalProperties: false, description: 'What a real browser saw when it loaded the page.' },
)
export type BrowserReport = Static<typeof BrowserReportSchema>

export const BROWSER_SCHEMAS = [BrowserReportSchema]
