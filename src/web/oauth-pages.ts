/**
 * The pages the OAuth authorization server renders itself (oauth/oauth.guards.ts, OAuthPages),
 * drawn as every page of the web site is: its error page is the message page in the layout, and
 * the device flow's pages (entering a code, checking it, done) are views of their own. The
 * library answers outside any session of the web site, so the pages name no one signed in.
 */
import type { Config } from '../config.ts'
import type { OAuthPages } from '../oauth/oauth.guards.ts'
import { webAssets } from './assets.ts'
import { type PageContext, renderPage } from './pages.ts'

export function oauthPages(config: Pick<Config, 'siteUrl' | 'signup'>): OAuthPages {
  const context = (): PageContext => ({ account: null, csrf: '', path: '', signupOpen: config.signup === 'open', assets: webAssets().tags })
  const home = { href: `${config.siteUrl}/`, text: 'Plinth' }
  return {
    error: (lines) => renderPage(context(), 'message', { title: 'Could not connect', lines, link: home }),
    deviceCode: (page) => renderPage(context(), 'device-code', { title: 'Sign in a device · Plinth', step: 'code', device: page }),
    deviceConfirm: (page) => renderPage(context(), 'device-code', { title: 'Check the code · Plinth', step: 'confirm', device: page }),
    deviceDone: (page) =>
      renderPage(context(), 'message', {
        title: 'Device signed in',
        lines: [`${page.clientName} is signed in. You can close this page and go back to your terminal.`],
        link: home,
      }),
  }
}
