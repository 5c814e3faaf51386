/**
 * What a person sees opening `{site_url}/mcp` in a browser. The web site and its token page do
 * not exist yet, so this says how to mint a token from the shell and how to connect a client.
 */
import type { Config } from '../config.ts'
import { escapeHtml } from '../core/html.ts'

export function tokenPage(config: Pick<Config, 'baseUrl'>): string {
  const mcpUrl = escapeHtml(`${config.baseUrl}/mcp`)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Plinth MCP server</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;color:#222}code,pre{background:#f4f4f4;border-radius:4px}code{padding:0 .2em}pre{padding:.8em;overflow-x:auto}</style>
</head>
<body>
<h1>Plinth MCP server</h1>
<p>AI agents publish and refine websites through this MCP endpoint: <code>${mcpUrl}</code> (Streamable HTTP).</p>
<h2>Get a token</h2>
<p>There is no dashboard yet: tokens are minted from the shell, in the Plinth folder.</p>
<pre>npx plinth token create --email you@example.com --name "my agent" --access mcp</pre>
<p>The last line printed is the token (<code>plinth_...</code>). It is shown once; only its hash is stored.</p>
<h2>Connect a client</h2>
<p>Send it as a bearer token, for example with Claude Code:</p>
<pre>claude mcp add --transport http plinth ${mcpUrl} --header "Authorization: Bearer plinth_..."</pre>
<p>The README has the settings for Cursor, VS Code and other clients.</p>
</body>
</html>
`
}
