// Every page of the console, by path, in one table: the order is the order of matching (a fixed path
// before a parameter in the same place). A new page is a line here and a file under pages/<area>/.
import type { ComponentChildren } from 'preact';
import { InstanceAdministratorsPage } from './pages/admin/administrators.tsx';
import { InstanceOrganizationsPage } from './pages/admin/organizations.tsx';
import { InstanceOverviewPage } from './pages/admin/overview.tsx';
import { InstancePeoplePage } from './pages/admin/people.tsx';
import { AuditLogPage } from './pages/audit/audit-log.tsx';
import { AuditStreamPage } from './pages/audit/audit-stream.tsx';
import { DesktopSignInPage, desktopSignInPath } from './pages/auth/desktop-sign-in.tsx';
import { SsoCallbackPage, ssoCallbackPath } from './pages/auth/sso-sign-in.tsx';
import { BotPage } from './pages/bots/bot.tsx';
import { BotListPage } from './pages/bots/bots.tsx';
import { ApiKeysPage } from './pages/keys/api-keys.tsx';
import { InstallLinksPage } from './pages/keys/install-links.tsx';
import { McpConnectionPage } from './pages/mcp/mcp-connection.tsx';
import { McpConnectionListPage } from './pages/mcp/mcp-connections.tsx';
import { McpCreatePage } from './pages/mcp/mcp-create.tsx';
import { PluginInstallPage } from './pages/mcp/plugin-install.tsx';
import { InvitationAcceptPage, invitationAcceptPath } from './pages/members/invitation-accept.tsx';
import { InvitationsPage } from './pages/members/invitations.tsx';
import { MembersPage } from './pages/members/members.tsx';
import { TeamsPage } from './pages/members/teams.tsx';
import { MemoryPage } from './pages/memory/memory.tsx';
import { NewOrganizationPage } from './pages/organizations/new-organization.tsx';
import { OrganizationSettingsPage } from './pages/organizations/settings.tsx';
import { RolesPage } from './pages/roles/roles.tsx';
import { ScimPage } from './pages/sso/scim.tsx';
import { SsoSetupPage } from './pages/sso/sso-setup.tsx';
import { SsoTestReturnPage, ssoTestReturnPath } from './pages/sso/sso-test.tsx';
import type { PermissionKey } from './roles.tsx';
import { matchPath, type Params } from './router.tsx';

/**
 * Where a page is shown: `shell` in the signed-in console with its navigation, for the active
 * organization; `alone` signed in but without the shell; `public` whoever is (or is not) signed in.
 */
type Frame = 'shell' | 'alone' | 'public';

export interface PageContext<P = Record<string, string>> {
  params: P;
  /** The session's active organization ('' outside the shell). */
  organizationId: string;
  /** For a page that signs the person in (the SSO callback). */
  onSignedIn: () => void;
  /** Reads the person's organizations again, for the shell's picker (one created, renamed or left). */
  onOrganizationsChanged: () => Promise<unknown>;
}

export interface Route {
  path: string;
  frame: Frame;
  render: (context: PageContext) => ComponentChildren;
  /** The page stays until it is done even though it changes the address at once (a one-time code). */
  stays?: boolean;
  /** A shell page shown without an active organization too (creating one). */
  withoutOrganization?: boolean;
}

function route<P extends string>(
  path: P,
  render: (context: PageContext<Params<P>>) => ComponentChildren,
  options: { frame?: Frame; stays?: boolean; withoutOrganization?: boolean } = {},
): Route {
  // matchPath answers exactly the pattern's parameter names, which is what Params<P> lists.
  return { ...options, path, frame: options.frame ?? 'shell', render: render as Route['render'] };
}

export const routes: Route[] = [
  route('/', ({ organizationId }) => <MembersPage organizationId={organizationId} />),
  route('/members', ({ organizationId }) => <MembersPage organizationId={organizationId} />),
  route('/settings', ({ organizationId, onOrganizationsChanged }) => (
    <OrganizationSettingsPage organizationId={organizationId} onOrganizationsChanged={onOrganizationsChanged} />
  )),
  route(
    '/organizations/new',
    ({ onOrganizationsChanged }) => <NewOrganizationPage onOrganizationsChanged={onOrganizationsChanged} />,
    { withoutOrganization: true },
  ),
  route('/invitations', ({ organizationId }) => <InvitationsPage organizationId={organizationId} />),
  route('/teams', ({ organizationId }) => <TeamsPage organizationId={organizationId} />),
  route('/roles', ({ organizationId }) => <RolesPage organizationId={organizationId} />),
  route('/api-keys', ({ organizationId }) => <ApiKeysPage organizationId={organizationId} />),
  route('/install-links', ({ organizationId }) => <InstallLinksPage organizationId={organizationId} />),
  route('/sso', ({ organizationId }) => <SsoSetupPage organizationId={organizationId} />),
  route('/scim', ({ organizationId }) => <ScimPage organizationId={organizationId} />),
  route('/audit-stream', ({ organizationId }) => <AuditStreamPage organizationId={organizationId} />),
  route('/mcp-connections', ({ organizationId }) => <McpConnectionListPage organizationId={organizationId} />),
  route('/mcp-connections/new', ({ organizationId }) => <McpCreatePage organizationId={organizationId} />),
  route('/mcp-connections/install-plugin', () => <PluginInstallPage />),
  route('/mcp-connections/:connectionId', ({ organizationId, params }) => (
    <McpConnectionPage organizationId={organizationId} connectionId={params.connectionId} />
  )),
  route('/audit-log', ({ organizationId }) => <AuditLogPage organizationId={organizationId} />),
  route('/memory', ({ organizationId }) => <MemoryPage organizationId={organizationId} />),
  route('/bots', ({ organizationId }) => <BotListPage organizationId={organizationId} />),
  route('/bots/:connectionId', ({ params }) => <BotPage connectionId={params.connectionId} />),
  // The instance's administration: its administrators need no organization of their own to use it.
  route('/admin', () => <InstanceOverviewPage />, { withoutOrganization: true }),
  route('/admin/people', () => <InstancePeoplePage />, { withoutOrganization: true }),
  route('/admin/organizations', () => <InstanceOrganizationsPage />, { withoutOrganization: true }),
  route('/admin/administrators', () => <InstanceAdministratorsPage />, { withoutOrganization: true }),
  // Back from the identity provider: the code is exchanged even in a tab that had a session (a new sign-in).
  route(ssoCallbackPath, ({ onSignedIn }) => <SsoCallbackPage onSignedIn={onSignedIn} />, {
    frame: 'public',
    stays: true,
  }),
  // A test sign-in's window (opened by the SSO page) shows its outcome whoever is signed in there.
  route(ssoTestReturnPath, () => <SsoTestReturnPage />, { frame: 'public' }),
  // An invitation's link: whoever opens it, signed in or not (the page signs in or up, then joins).
  route(invitationAcceptPath, ({ onSignedIn }) => <InvitationAcceptPage onSignedIn={onSignedIn} />, {
    frame: 'public',
  }),
  // The desktop app's sign-in: signed in first (as anywhere), then the confirmation page of its own.
  route(desktopSignInPath, () => <DesktopSignInPage />, { frame: 'alone' }),
];

export interface Section {
  path: string;
  label: string;
  /**
   * Listed only for holders of this key (GET /v1/me/permissions): the API refuses others the page's
   * reads (403), so they would find nothing there but who to ask. The page itself still says so to
   * someone who opens it. A custom role's keys decide as a built-in role's do: no role is named here.
   */
  requires?: PermissionKey;
}

/** The console's navigation; a page is under the entry whose path starts its own ('/' is the members'). */
export const sections: Section[] = [
  { path: '/members', label: 'Members' },
  { path: '/invitations', label: 'Invitations', requires: 'members.invite' },
  { path: '/teams', label: 'Teams' },
  { path: '/roles', label: 'Roles' },
  { path: '/api-keys', label: 'API keys', requires: 'api_keys.manage' },
  { path: '/install-links', label: 'Install links' },
  { path: '/sso', label: 'SSO', requires: 'sso.manage' },
  { path: '/scim', label: 'SCIM', requires: 'scim.manage' },
  { path: '/audit-stream', label: 'Audit stream', requires: 'audit_stream.manage' },
  { path: '/mcp-connections', label: 'MCP connections' },
  { path: '/audit-log', label: 'Audit log', requires: 'audit.view' },
  { path: '/memory', label: 'Memory' },
  { path: '/bots', label: 'Bots', requires: 'messenger.manage' },
  { path: '/settings', label: 'Organization settings' },
];

/** The instance administration's navigation, shown to instance administrators only (GET /v1/me says who is). */
export const instanceSections: Section[] = [
  { path: '/admin', label: 'Overview' },
  { path: '/admin/people', label: 'People' },
  { path: '/admin/organizations', label: 'Organizations' },
  { path: '/admin/administrators', label: 'Administrators' },
];

/** The sections a person holding `keys` in the active organization may use (undefined: not read yet). */
export const sectionsFor = (keys: ReadonlySet<string> | undefined) =>
  sections.filter((section) => !section.requires || keys?.has(section.requires));

export interface Match {
  route: Route;
  params: Record<string, string>;
}

/** The first route whose pattern the path matches, or null (no page there). */
export function findRoute(path: string): Match | null {
  for (const candidate of routes) {
    const params = matchPath(candidate.path, path);
    if (params) return { route: candidate, params };
  }
  return null;
}

/** The navigation entry a route sits under. */
export function sectionOf(match: Match | null) {
  if (!match) return undefined;
  const path = match.route.path === '/' ? '/members' : match.route.path;
  if (path === '/admin' || path.startsWith('/admin/')) return instanceSections.find((section) => section.path === path);
  return sections.find((section) => path === section.path || path.startsWith(`${section.path}/`));
}
