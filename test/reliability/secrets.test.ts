// No secret leaks: the world plants known secrets through the API (passwords, session tokens, API
// keys, an MCP server's API key, an OAuth client secret and private key, bot tokens, the webhook and delivery secrets,
// the SCIM token, install-link and invitation tokens, an SSO client secret). Then every route is
// called by every kind of caller, valid and with secrets stuffed into invalid input, and:
// - no response body after the one that created a secret contains it,
// - no log line contains any of them (logging at debug, the most talkative level),
// - no row of any table, in any schema, holds one in clear text.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api } from '../support/http.ts';
import { fillPath, loadOpenApi, type OpenApi } from './openapi.ts';
import { prepareRequest } from './requests.ts';
import { marker, oauthTokenPattern, startWorld, type World } from './world.ts';

let world: World;
let openapi: OpenApi;
const figures = { responses: 0, secrets: 0, logLines: 0, rows: 0, tables: 0 };

// World setup can take minutes on the embedded database of a busy 2-core machine (several suites
// at once): the hooks get their own time, and `after` closes a world still being built when the run stops.
let starting: Promise<World> | undefined;
const hookTimeout = { timeout: 600_000 };

before(async () => {
  starting = startWorld({ logLevel: 'debug' });
  world = await starting;
  openapi = await loadOpenApi(world.app.url);
  figures.secrets = Object.keys(world.planted).length;
}, hookTimeout);

after(async () => {
  console.log(
    `secrets: ${figures.secrets} planted, ${figures.responses} responses scanned, ${figures.logLines} log lines, ${figures.rows} rows in ${figures.tables} tables`,
  );
  await (await starting?.catch(() => undefined))?.close();
}, hookTimeout);

function findPlanted(text: string, except: string[] = []): string[] {
  return Object.entries(world.planted)
    .filter(([, secret]) => secret && text.includes(secret) && !except.includes(secret))
    .map(([name]) => name);
}

type Caller = 'owner' | 'admin' | 'member' | 'apiKey' | 'scim' | 'webhook' | 'anonymous';
function credentials(caller: Caller): { headers: Record<string, string>; presented: string[] } {
  const { tenant } = world;
  switch (caller) {
    case 'owner':
    case 'admin':
    case 'member':
      return { headers: { authorization: `Bearer ${tenant[caller].token}` }, presented: [tenant[caller].token] };
    case 'apiKey':
      return { headers: { 'x-api-key': world.apiKey }, presented: [world.apiKey] };
    case 'scim':
      return { headers: { authorization: `Bearer ${world.scimToken}` }, presented: [world.scimToken] };
    case 'webhook':
      return { headers: { 'x-telegram-bot-api-secret-token': world.webhookSecret }, presented: [world.webhookSecret] };
    case 'anonymous':
      return { headers: {}, presented: [] };
  }
}

/** Every string of a JSON value replaced by `secret` (to see whether an error repeats what it was sent). */
function stuff(value: unknown, secret: string): unknown {
  if (typeof value === 'string') return secret;
  if (Array.isArray(value)) return value.map((item) => stuff(item, secret));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stuff(v, secret)]));
  return value;
}

test('no response after the creating one, and no log line, shows a planted secret', { timeout: 600_000 }, async () => {
  const leaks: string[] = [];
  // Operations that end or hand over what the rest of the run needs run last.
  const last = new Set([
    'signOut',
    'transferOwnership',
    'rotateScimToken',
    'deleteMessengerConnection',
    'revokeApiKey',
  ]);
  const operations = [...openapi.operations].sort(
    (a, b) => Number(last.has(a.operationId)) - Number(last.has(b.operationId)),
  );
  const secretValues = Object.values(world.planted);
  for (const operation of operations) {
    const callers: Caller[] = operation.path.startsWith('/scim/v2')
      ? ['scim', 'anonymous']
      : operation.path.startsWith('/v1/webhooks')
        ? ['webhook', 'anonymous']
        : operation.operationId === 'signOut'
          ? ['anonymous'] // the fixture sessions must survive; ending one is covered elsewhere
          : ['member', 'admin', 'apiKey', 'anonymous', 'owner'];
    for (const caller of callers) {
      const prepared = await prepareRequest(world, operation.operationId, operation.path);
      const url = `${fillPath(operation.path, prepared.path)}${prepared.query ? `?${prepared.query}` : ''}`;
      const { headers, presented } = credentials(caller);
      const send = (body: unknown) =>
        api(world.app.url).send(operation.method, url, body, {
          headers: { ...headers, ...(prepared.contentType ? { 'content-type': prepared.contentType } : {}) },
        });
      const response = await send(prepared.body);
      figures.responses++;
      for (const token of response.text.match(oauthTokenPattern) ?? [])
        leaks.push(
          `${operation.method} ${operation.path} as ${caller} -> ${response.status} shows an OAuth token ${token.slice(0, 5)}…`,
        );
      // The install page and the desktop configuration are reached with the install-link token: the page's
      // open-in-app link carries that token back to whoever presented it, which tells them nothing new.
      const echoed = operation.path.includes('{token}') ? [prepared.path.token!] : [];
      for (const name of findPlanted(response.text, [...presented, ...echoed]))
        leaks.push(`${operation.method} ${operation.path} as ${caller} -> ${response.status} shows ${name}`);
      // The same request with every string field set to a secret-looking value: a refusal must not repeat it.
      // (Not a planted secret: where such a request succeeds, the value is stored and shown as data.)
      if (prepared.body !== undefined) {
        for (const secret of [marker('stuffed'), `${Date.now()}:${marker('AAAAAAAAAAAAAAAAAAAA')}`]) {
          const refused = await send(stuff(prepared.body, secret));
          figures.responses++;
          if (refused.status >= 400 && refused.text.includes(secret))
            leaks.push(
              `${operation.method} ${operation.path} as ${caller} -> ${refused.status} repeats a secret it was sent`,
            );
        }
      }
    }
  }
  // The connection whose OAuth tokens are stored, read and tested by everyone who may.
  for (const caller of ['member', 'admin', 'owner'] as const) {
    const { headers } = credentials(caller);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/test'],
      ['GET', ''],
    ] as const) {
      const response = await api(world.app.url).send(
        method,
        `/v1/mcp-connections/${world.ids.connectedOauthConnectionId}${suffix}`,
        undefined,
        { headers },
      );
      figures.responses++;
      const shown = [
        ...findPlanted(response.text, credentials(caller).presented),
        ...(response.text.match(oauthTokenPattern) ?? []),
      ];
      if (shown.length)
        leaks.push(`${method} connected OAuth connection${suffix} as ${caller} shows ${shown.join(', ')}`);
    }
  }
  // A wrong password for a real account, and a right password sent to the wrong place.
  await api(world.app.url).post('/v1/auth/sign-in', {
    email: world.tenant.owner.email,
    password: world.planted.memberPassword,
  });
  await api(world.app.url).post('/v1/auth/sign-in', {
    email: world.planted.ownerPassword,
    password: world.planted.ownerPassword,
  });
  await api(world.app.url, world.planted.scimToken).get('/v1/me');

  const logText = world.app.logText();
  figures.logLines = logText.split('\n').filter(Boolean).length;
  const inLogs = Object.entries(world.planted)
    .filter(([, secret]) => logText.includes(secret))
    .map(([name]) => name);
  inLogs.push(...(logText.match(oauthTokenPattern) ?? []).map((token) => `OAuth token ${token.slice(0, 5)}…`));
  assert.ok(figures.logLines > 100, `the app logged (${figures.logLines} lines)`);
  // Control: the scan sees what the logs do hold (request URLs name the resources they touched).
  assert.ok(logText.includes(world.ids.mcpConnectionId), 'the log scan can find a value that is logged');
  assert.deepEqual(leaks, [], 'no planted secret in a response after the one that created it');
  assert.deepEqual(inLogs, [], 'no planted secret in any log line');
  assert.ok(secretValues.length >= 15);
});

test('the database holds none of the planted secrets in clear text (every table, every schema)', async () => {
  const { rows: tables } = await world.app.db.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  assert.ok(
    tables.some((table) => table.name === 'sessions'),
    'the dump sees the application tables',
  );
  const found: string[] = [];
  for (const table of tables) {
    const { rows } = await world.app.db.query(`SELECT * FROM "${table.schema}"."${table.name}"`);
    figures.tables++;
    figures.rows += rows.length;
    const text = JSON.stringify(rows);
    for (const name of findPlanted(text)) found.push(`${table.schema}.${table.name} holds ${name}`);
    for (const token of text.match(oauthTokenPattern) ?? [])
      found.push(`${table.schema}.${table.name} holds an OAuth token ${token.slice(0, 5)}…`);
  }
  // Control: the OAuth tokens the scan looks for are stored (sealed) for the member who connected.
  const { rows: credentials } = await world.app.db.query(
    'SELECT * FROM mcp_connection_credentials WHERE connection_id = $1',
    [world.ids.connectedOauthConnectionId],
  );
  assert.ok(credentials.length > 0, 'the connected OAuth connection has stored credentials');
  assert.ok(
    world.oauthServer.stats.tokenRequests.some((request) => request.outcome === 'issued'),
    'the OAuth server issued tokens',
  );
  // Control: the same scan finds values that are stored in clear (e-mail addresses are not secrets).
  assert.ok(
    tables.length > 0 &&
      JSON.stringify((await world.app.db.query('SELECT * FROM users')).rows).includes(world.tenant.owner.email),
  );
  assert.deepEqual(found, []);
});
