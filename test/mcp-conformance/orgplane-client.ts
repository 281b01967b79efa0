// The conformance client adapter: takes orgplane through one client scenario of
// @modelcontextprotocol/conformance, as an organization's admin would, over orgplane's HTTP API:
// create a connection to the scenario's server, connect it through OAuth when it is protected
// (orgplane's authorize route, the authorization server's redirect followed as a browser would,
// orgplane's callback), test it (POST .../test: initialize, tools/list), and call a tool where the
// scenario expects one (./tool-call.ts: the probe's client code, the token from orgplane's service).
// Nothing here speaks MCP or OAuth itself: every request to the scenario's servers is orgplane's.
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { browserOf } from '../mcp-oauth/helpers.ts';
import { callToolAsProbe } from './tool-call.ts';

export interface ConformanceWorld {
  readonly app: TestApp;
  readonly tenant: Tenant;
}

export interface ScenarioRequest {
  scenario: string;
  serverUrl: string;
  /** MCP_CONFORMANCE_CONTEXT, parsed (pre-registered client credentials and the like). */
  context: Record<string, unknown> | null;
}

/** The tool each scenario's server offers, when the scenario expects orgplane to call one. */
const toolCalls: Record<string, { name: string; arguments: Record<string, unknown> }> = {
  tools_call: { name: 'add_numbers', arguments: { a: 5, b: 3 } },
};
const AUTH_TOOL = { name: 'test-tool', arguments: {} };

export class ScenarioFailed extends Error {}

/** Runs the flow; returns what happened step by step, or throws ScenarioFailed saying where it stopped. */
export async function driveScenario(world: ConformanceWorld, request: ScenarioRequest, steps: string[]): Promise<void> {
  const admin = api(world.app.url, world.tenant.admin.token);
  const oauth = request.scenario.startsWith('auth/');
  // The client credentials extension's scenarios (SEP-1046): orgplane obtains the token itself, no browser.
  const byClient = request.scenario.startsWith('auth/client-credentials-');

  const created = await admin.post('/v1/mcp-connections', {
    name: `Conformance ${request.scenario}`.slice(0, 255),
    url: request.serverUrl,
    authType: oauth ? 'oauth' : 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
    ...preRegisteredClient(request.context, byClient),
  });
  expect(steps, 'create the connection', created, 201);
  const connectionId: string = created.body.id;

  if (oauth && !byClient) await connect(world, connectionId, steps);

  const tested = await admin.post(`/v1/mcp-connections/${connectionId}/test`);
  expect(steps, 'test the connection', tested, 200);
  steps.push(
    `test: ok=${tested.body.ok} highestPassed=${tested.body.highestPassed} tools=${JSON.stringify(tested.body.tools)}`,
  );
  if (!tested.body.ok) throw new ScenarioFailed(`the test failed: ${JSON.stringify(tested.body.diagnostic)}`);

  const call = toolCalls[request.scenario] ?? (oauth ? AUTH_TOOL : null);
  if (!call) return;
  if (!oauth) {
    const refused = await callTool(request.serverUrl, undefined, call, steps);
    if (refused) throw new ScenarioFailed(`tools/call ${call.name} refused: HTTP ${refused.httpStatus}`);
    return;
  }
  const service = world.app.app.mcpOAuth;
  const usable = await service.accessToken(world.tenant.orgId, connectionId, null);
  if (usable.status !== 'ok') throw new ScenarioFailed(`no usable access token: ${usable.status}`);
  const refused = await callTool(request.serverUrl, usable.accessToken, call, steps);
  if (!refused) return;
  // 403 insufficient_scope: orgplane's one step-up (a refresh for the wider scopes); refused, the
  // admin connects again, and orgplane's next authorization asks for them.
  if (refused.httpStatus !== 403)
    throw new ScenarioFailed(`tools/call ${call.name} refused: HTTP ${refused.httpStatus}`);
  let token = await service.stepUp(world.tenant.orgId, connectionId, null, usable.scopes, refused.wwwAuthenticate);
  steps.push(`step-up by refresh: ${token ? 'a new token' : 'refused, reconnect'}`);
  if (!token) {
    await connect(world, connectionId, steps);
    const again = await service.accessToken(world.tenant.orgId, connectionId, null);
    if (again.status !== 'ok') throw new ScenarioFailed(`no usable access token after reconnecting: ${again.status}`);
    token = again.accessToken;
  }
  const still = await callTool(request.serverUrl, token, call, steps);
  if (still) throw new ScenarioFailed(`tools/call ${call.name} refused after the step-up: HTTP ${still.httpStatus}`);
}

/** Calls the tool; answers the refusal (an HTTP status) or undefined when it was called. */
async function callTool(
  serverUrl: string,
  token: string | undefined,
  call: { name: string; arguments: Record<string, unknown> },
  steps: string[],
) {
  const outcome = await callToolAsProbe(serverUrl, token, call.name, call.arguments);
  if ('httpStatus' in outcome) {
    steps.push(`tools/call ${call.name}: HTTP ${outcome.httpStatus} ${outcome.wwwAuthenticate ?? ''}`);
    return outcome;
  }
  steps.push(`tools/call ${call.name}: ${JSON.stringify(outcome.result.content)}`);
  if (outcome.result.isError) throw new ScenarioFailed(`tools/call ${call.name} answered with an error result`);
  return undefined;
}

/** Through orgplane's authorize route, the authorization server (approving at once) and orgplane's callback. */
async function connect(world: ConformanceWorld, connectionId: string, steps: string[]): Promise<void> {
  const authorize = await api(world.app.url, world.tenant.admin.token).post(
    `/v1/mcp-connections/${connectionId}/oauth/authorize`,
  );
  expect(steps, 'start the authorization', authorize, 200);
  // The browser: to the authorization server, which approves at once and redirects back.
  const approval = await fetch(authorize.body.authorizationUrl, { redirect: 'manual' });
  await approval.body?.cancel();
  const location = approval.headers.get('location');
  steps.push(`authorization endpoint: HTTP ${approval.status}`);
  if (approval.status < 300 || approval.status > 399 || !location)
    throw new ScenarioFailed(`the authorization endpoint answered ${approval.status}`);
  const back = new URL(location);
  if (back.origin !== world.app.url)
    throw new ScenarioFailed(`the authorization server redirected to ${back.origin}, not to orgplane`);
  // The browser that called authorize: it carries the binding cookie back to orgplane's callback.
  const callback = await api(world.app.url).get(`${back.pathname}${back.search}`, { headers: browserOf(authorize) });
  expect(steps, 'orgplane callback', callback, 200);
  if (callback.body?.status !== 'connected') throw new ScenarioFailed(`the callback did not connect: ${callback.text}`);
}

function expect(steps: string[], what: string, response: { status: number; text: string }, status: number): void {
  steps.push(`${what}: HTTP ${response.status}`);
  if (response.status !== status) throw new ScenarioFailed(`${what} answered ${response.status}: ${response.text}`);
}

/**
 * auth/pre-registration and the client credentials scenarios hand over the client the authorization
 * server knows (with its secret, or the private key of private_key_jwt); orgplane takes it as configuration.
 */
function preRegisteredClient(context: Record<string, unknown> | null, byClient: boolean): Record<string, unknown> {
  if (typeof context?.client_id !== 'string') return {};
  return {
    oauthClient: {
      clientId: context.client_id,
      ...(typeof context.client_secret === 'string' ? { clientSecret: context.client_secret } : {}),
      ...(typeof context.private_key_pem === 'string'
        ? { privateKey: context.private_key_pem, tokenEndpointAuthMethod: 'private_key_jwt' }
        : {}),
      ...(typeof context.signing_algorithm === 'string' ? { signingAlgorithm: context.signing_algorithm } : {}),
      ...(byClient ? { grantType: 'client_credentials' } : {}),
    },
  };
}
