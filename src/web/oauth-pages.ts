/**
 * The pages the OAuth authorization server renders itself (oauth/oauth.guards.ts, OAuthPages),
 * drawn as every page of the web site is: its error page is the message page in the layout. The
 * library answers outside any session of the web site, so the page names no one signed in.
 */
import type { Config } from '../config.ts'
import type { OAuthPages } from '../oauth/oauth.guards.ts'
import { webAssets } from './assets.ts'
import { type PageContext, renderPage } from './pages.ts'

export function oauthPages(config: Pick<Config, 'siteUrl' | 'signup'>): OAuthPages {
  const context = (): PageContext => ({ account: null, csrf: '', path: '', signupOpen: config.signup === 'open', assets: webAssets().tags })
  return {
    error: (lines) => renderPage(context(), 'message', { title: 'Could not connect', lines, link: { href: `${config.siteUrl}/`, text: 'Plinth' } }),
  }
}
