import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, session, type ApiError, type paths } from './api.ts';
import { AuditLogPage } from './pages/audit/audit-log.tsx';
import { AuditStreamPage } from './pages/audit/audit-stream.tsx';
import { InvitationsPage } from './pages/members/invitations.tsx';
import { McpConnectionsPage } from './pages/mcp/mcp-connections.tsx';
import { MembersPage } from './pages/members/members.tsx';
import { TeamsPage } from './pages/members/teams.tsx';
import { ApiKeysPage } from './pages/keys/api-keys.tsx';
import { InstallLinksPage } from './pages/keys/install-links.tsx';
import { ScimPage } from './pages/sso/scim.tsx';
import { SsoSetupPage } from './pages/sso/sso-setup.tsx';
import { MemoryPage } from './pages/memory/memory.tsx';
import { BotsPage } from './pages/bots/bots.tsx';
import { navigate, usePath } from './router.ts';

type Me = paths['/v1/me']['get']['responses'][200]['content']['application/json'];

const sections = [
  { path: '/members', label: 'Members', page: MembersPage },
  { path: '/invitations', label: 'Invitations', page: InvitationsPage },
  { path: '/teams', label: 'Teams', page: TeamsPage },
  { path: '/api-keys', label: 'API keys', page: ApiKeysPage },
  { path: '/install-links', label: 'Install links', page: InstallLinksPage },
  { path: '/sso', label: 'SSO', page: SsoSetupPage },
  { path: '/scim', label: 'SCIM', page: ScimPage },
  { path: '/audit-stream', label: 'Audit stream', page: AuditStreamPage },
  { path: '/mcp-connections', label: 'MCP connections', page: McpConnectionsPage },
  { path: '/audit-log', label: 'Audit log', page: AuditLogPage },
  { path: '/memory', label: 'Memory', page: MemoryPage },
  { path: '/bots', label: 'Bots', page: BotsPage },
];

export function Shell({ onSignedOut }: { onSignedOut: () => void }) {
  const path = usePath();
  const [me, setMe] = useState<Me>();
  const [error, setError] = useState<ApiError>();

  async function load() {
    const answer = await api.GET('/v1/me');
    if (answer.response.status === 401) return signedOut();
    if (answer.data) setMe(answer.data);
    else setError(answer.error as ApiError);
  }
  function signedOut() {
    session.clear();
    onSignedOut();
  }
  useEffect(() => void load(), []);

  async function switchOrganization(organizationId: string) {
    const answer = await api.PUT('/v1/session/active-organization', { body: { organizationId } });
    if (answer.error) setError(answer.error as ApiError);
    await load();
  }
  async function signOut() {
    await api.POST('/v1/auth/sign-out');
    signedOut();
  }

  if (!me)
    return (
      <main class="auth">
        <p aria-live="polite">{error ? errorMessage(error) : 'Loading…'}</p>
      </main>
    );
  const active = me.organizations.find((organization) => organization.id === me.activeOrganizationId);
  const current = sections.find((section) => path.startsWith(section.path)) ?? sections[0]!;

  return (
    <div class="shell">
      <header>
        <a
          class="brand"
          href="/"
          onClick={(event) => {
            event.preventDefault();
            navigate('/');
          }}
        >
          orgplane
        </a>
        {me.organizations.length > 0 && (
          <label class="switcher">
            <span>Organization</span>
            <select
              value={me.activeOrganizationId ?? ''}
              onChange={(event) => switchOrganization((event.target as HTMLSelectElement).value)}
            >
              {me.organizations.map((organization) => (
                <option key={organization.id} value={organization.id}>
                  {organization.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <span class="who">{me.user.email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {sections.map((section) => (
            <li key={section.path}>
              <a
                href={section.path}
                aria-current={section === current ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(section.path);
                }}
              >
                {section.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        {error && (
          <p role="alert" class="form-error">
            {errorMessage(error)}
          </p>
        )}
        {active ? (
          <>
            <p class="plan">
              Plan: <strong>{active.plan}</strong> · your role: {active.role}
            </p>
            <current.page organizationId={active.id} />
          </>
        ) : (
          <p>
            You are not a member of any organization yet. Ask an owner for an invitation, or create one with{' '}
            <code>POST /v1/orgs</code>.
          </p>
        )}
      </main>
    </div>
  );
}
