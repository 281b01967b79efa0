// How an integrator uses @orgplane/client: every path, parameter, body and answer is typed from the
// OpenAPI document, and an error narrows on its `error` code. Type-checked with the repository
// (npm run typecheck) and by test/integrators/clients.test.ts.
import { createOrgplaneClient, type ErrorCode } from '@orgplane/client';

export async function renameConnection(baseUrl: string, token: string, connectionId: string): Promise<string> {
  const client = createOrgplaneClient({ baseUrl, token });

  const current = await client.GET('/v1/mcp-connections/{connectionId}', { params: { path: { connectionId } } });
  if (!current.data) throw new Error(`could not read the connection: ${current.error?.error}`);

  const { data, error, response } = await client.PUT('/v1/mcp-connections/{connectionId}', {
    params: { path: { connectionId } },
    body: {
      name: 'Renamed',
      url: current.data.url,
      authType: current.data.authType,
      credentialMode: current.data.credentialMode,
      // memberIds and teamIds have defaults: they may be left out.
      access: { orgWide: true },
      expectedUpdatedAt: current.data.updatedAt,
    },
  });
  if (data) return data.updatedAt;
  if (error.error === 'connection_conflict') return 'someone else changed it first: read it again and retry';
  const code: ErrorCode<'editMcpConnection', 409> | undefined =
    response.status === 409 ? (error.error as ErrorCode<'editMcpConnection', 409>) : undefined;
  throw new Error(`edit refused: ${response.status} ${code ?? error.error}`);
}
