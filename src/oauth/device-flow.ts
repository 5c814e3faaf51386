/**
 * The device authorization grant (RFC 8628) for machines without a browser, as `plinth login
 * --device` uses it: the command gets a user code and shows it; the person opens
 * `{base_url}/oauth/device` on any device, enters the code, checks that it is the one their
 * terminal shows (and where the request came from), then signs in and allows the app on the
 * consent page, as for any OAuth client. oidc-provider runs the flow; its three pages are drawn
 * by the web site (OAuthPages), their forms named as the library reads them (`xsrf`,
 * `user_code`, `confirm`, `abort`).
 */
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider'
import type { OAuthPages } from './oauth.guards.ts'

/** A user code is good for 10 minutes, as RFC 8628's example and most providers. */
export const DEVICE_CODE_TTL_SECONDS = 10 * 60

/** What a failed step of the code page says, by the library's error names. */
const PROBLEMS: Record<string, string> = {
  NoCodeError: 'Enter the code your terminal shows.',
  NotFoundError: 'No sign-in waits for this code. Check it against your terminal and try again.',
  ExpiredError: 'This code has expired. Start the sign-in again on your device.',
  AlreadyUsedError: 'This code was already used. Start the sign-in again on your device to get a new one.',
  AbortedError: 'Sign-in cancelled: the device was given no access.',
}

const secretOf = (ctx: KoaContextWithOIDC): string => {
  const secret = (ctx.oidc.session?.state as { secret?: unknown } | undefined)?.secret
  return typeof secret === 'string' ? secret : ''
}

export function deviceFlowFeature(pages: OAuthPages): NonNullable<NonNullable<Configuration['features']>['deviceFlow']> {
  return {
    enabled: true,
    userCodeInputSource: async (ctx, _form, _out, err) => {
      const problem = err ? (PROBLEMS[err.name] ?? 'The code could not be checked; start again from the code page.') : undefined
      const userCode = err && 'userCode' in err && typeof err.userCode === 'string' ? err.userCode : undefined
      ctx.type = 'html'
      ctx.body = await pages.deviceCode({ action: ctx.oidc.urlFor('code_verification'), xsrf: secretOf(ctx), userCode, problem })
    },
    userCodeConfirmSource: async (ctx, _form, client, deviceInfo, userCode) => {
      ctx.type = 'html'
      ctx.body = await pages.deviceConfirm({
        action: ctx.oidc.urlFor('code_verification'),
        xsrf: secretOf(ctx),
        userCode,
        clientName: client.clientName ?? client.clientId,
        from: typeof deviceInfo.ip === 'string' ? deviceInfo.ip : undefined,
      })
    },
    successSource: async (ctx) => {
      ctx.type = 'html'
      ctx.body = await pages.deviceDone({ clientName: ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? 'The app' })
    },
  }
}
