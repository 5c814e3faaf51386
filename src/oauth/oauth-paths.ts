/** Paths of the authorization server's own endpoints and metadata (answered by oauth.routes.ts, before Fastify). */
export const OAUTH_PATHS = {
  prefix: '/oauth/',
  authorize: '/oauth/authorize',
  register: '/oauth/register',
  discovery: '/.well-known/openid-configuration',
  rfc8414Discovery: '/.well-known/oauth-authorization-server',
} as const

/** The library's endpoints, by its names for them; each also answers the paths below it (an interaction's resume, a client's registration). */
export const OAUTH_ROUTES = {
  authorization: OAUTH_PATHS.authorize,
  token: '/oauth/token',
  registration: OAUTH_PATHS.register,
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  userinfo: '/oauth/userinfo',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const
