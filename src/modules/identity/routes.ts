import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, bearerToken, callerOf } from '../../http/auth.ts';
import { forbidden } from '../../http/errors.ts';
import { afterFromCursor, commonErrorResponses, errorBodySchema, pageOf, paginationQuerySchema } from '../../http/schemas.ts';
import {
  bootstrapBodySchema,
  apiKeyIdSchema,
  apiKeySchema,
  assignableRoleSchema,
  emailSchema,
  invitationIdSchema,
  invitationSchema,
  memberIdSchema,
  memberSchema,
  organizationIdSchema,
  organizationNameSchema,
  organizationSchema,
  passwordSchema,
  personNameSchema,
  planSchema,
  teamIdSchema,
  teamSchema,
  toApiKey,
  toInvitation,
  toMember,
  toOrganization,
  toTeam,
  toUser,
  userSchema,
} from './schemas.ts';
import type { IdentityService } from './service.ts';

const sessionResponse = z.object({ user: userSchema, sessionToken: z.string().describe('Bearer token; shown only here') });
const orgParams = z.object({ organizationId: organizationIdSchema });
const noContent = z.null().describe('No content');
const organizationNotFound = errorBodySchema.describe('organization_not_found: no such organization, or you are not a member');

/** Bootstrap, sign-up/in/out, organizations, members, teams, invitations, API keys and plans. */
export const identityRoutes: FastifyPluginAsyncZod<{ identity: IdentityService }> = async (app, { identity }) => {
  app.post('/v1/bootstrap', {
    schema: {
      tags: ['Bootstrap'],
      operationId: 'bootstrap',
      summary: 'Create the first user (an instance administrator) and organization',
      description: 'Only while the instance has no organization; afterwards 409 `already_bootstrapped`.',
      body: bootstrapBodySchema,
      response: {
        201: z.object({ user: userSchema, organization: organizationSchema, sessionToken: z.string() }),
        400: commonErrorResponses[400],
        409: errorBodySchema.describe('already_bootstrapped'),
      },
    },
  }, async (request, reply) => {
    const result = await identity.bootstrap(request.body);
    return reply.status(201).send({ user: toUser(result.user), organization: toOrganization(result.organization), sessionToken: result.sessionToken });
  });

  app.post('/v1/auth/sign-up', {
    schema: {
      tags: ['Users'],
      operationId: 'signUp',
      summary: 'Create an account and a session',
      body: z.object({ email: emailSchema, password: passwordSchema, name: personNameSchema }),
      response: {
        201: sessionResponse,
        400: commonErrorResponses[400],
        403: errorBodySchema.describe('sign_up_disabled'),
        409: errorBodySchema.describe('email_taken'),
      },
    },
  }, async (request, reply) => {
    const result = await identity.signUp(request.body);
    return reply.status(201).send({ user: toUser(result.user), sessionToken: result.sessionToken });
  });

  app.post('/v1/auth/sign-in', {
    schema: {
      tags: ['Users'],
      operationId: 'signIn',
      summary: 'Exchange email and password for a session token',
      description:
        'Failed attempts are limited across all processes, in fixed 15-minute windows: 10 on one account from one client address, ' +
        '50 from one address over all accounts, and 100 on one account from all addresses together. Successful sign-ins do not count, ' +
        'and do not clear earlier failures; attempts a limit refuses do not count against the others. Once a limit is reached, every ' +
        'attempt it covers, with the right password too, is 429 `rate_limited` (with `Retry-After`) until the window ends: so a stranger ' +
        'guessing from one address locks out that address, not the account\'s owner signing in from another one.',
      body: z.object({ email: emailSchema, password: z.string().min(1).max(256) }),
      response: {
        200: sessionResponse,
        400: commonErrorResponses[400],
        401: errorBodySchema.describe('invalid_credentials'),
        429: errorBodySchema.describe('rate_limited'),
      },
    },
  }, async (request) => {
    const result = await identity.signIn(request.body, request.ip);
    return { user: toUser(result.user), sessionToken: result.sessionToken };
  });

  app.post('/v1/auth/sign-out', {
    onRequest: authenticate(),
    schema: {
      tags: ['Users'],
      operationId: 'signOut',
      summary: 'Revoke the current session',
      response: { 204: noContent, 401: commonErrorResponses[401] },
    },
  }, async (request, reply) => {
    await identity.signOut(callerOf(request));
    return reply.status(204).send(null);
  });

  app.get('/v1/me', {
    onRequest: authenticate(),
    schema: {
      tags: ['Users'],
      operationId: 'getMe',
      summary: 'The signed-in user and the organizations they belong to',
      response: {
        200: z.object({
          user: userSchema,
          organizations: z.array(organizationSchema.extend({ role: z.enum(['owner', 'admin', 'member']), memberId: z.string() })),
          activeOrganizationId: z.string().nullable()
            .describe('The session\'s active organization; null when it has none, or when the user is no longer an active member of it'),
        }),
        401: commonErrorResponses[401],
        403: commonErrorResponses[403],
      },
    },
  }, async (request) => {
    const result = await identity.me(callerOf(request));
    return {
      user: toUser(result.user),
      organizations: result.organizations.map((row) => ({ ...toOrganization(row), role: row.role, memberId: row.member_id })),
      activeOrganizationId: result.activeOrganizationId,
    };
  });

  app.post('/v1/orgs', {
    onRequest: authenticate(),
    schema: {
      tags: ['Organizations'],
      operationId: 'createOrganization',
      summary: 'Create an organization; the caller becomes its owner and it becomes the active one',
      body: z.object({ name: organizationNameSchema }),
      response: { 201: z.object({ organization: organizationSchema }), ...commonErrorResponses },
    },
  }, async (request, reply) => {
    const organization = await identity.createOrganization(callerOf(request), request.body.name);
    return reply.status(201).send({ organization: toOrganization(organization) });
  });

  app.put('/v1/session/active-organization', {
    onRequest: authenticate(),
    schema: {
      tags: ['Organizations'],
      operationId: 'setActiveOrganization',
      summary: 'Choose the session\'s active organization (one the caller belongs to)',
      body: z.object({ organizationId: organizationIdSchema }),
      response: { 200: z.object({ organization: organizationSchema }), ...commonErrorResponses, 404: organizationNotFound },
    },
  }, async (request) => {
    const organization = await identity.setActiveOrganization(callerOf(request), request.body.organizationId);
    return { organization: toOrganization(organization) };
  });

  // The owner's address as stored, not re-validated: an account provisioned by SCIM may carry an
  // address stricter email syntax would refuse (internationalized, say), and an answer must not fail on it.
  const ownerSchema = z.object({ memberId: z.string(), userId: z.string(), name: z.string(), email: z.string().describe('Email address'), image: z.string() });
  // No authenticate() hook: the service checks the session in the same query that reads the organization.
  app.get('/v1/org', {
    schema: {
      tags: ['Organizations'],
      operationId: 'getActiveOrganization',
      summary: 'The active organization of the current session',
      security: [{ session: [] }],
      description:
        'Its owner, the caller\'s member record and the caller\'s teams. A session without an active organization, ' +
        'or whose user is no longer a member of it, gets 404 `organization_not_found` with a `message`.',
      response: {
        200: z.object({
          organization: organizationSchema.extend({ owner: ownerSchema }),
          currentMember: memberSchema,
          currentMemberTeams: z.array(teamSchema),
        }).meta({ id: 'ActiveOrganization' }).describe('The active organization with its owner, your member record in it, and the teams you belong to there'),
        401: commonErrorResponses[401],
        404: errorBodySchema.describe('organization_not_found: no active organization, or no longer a member'),
      },
    },
  }, async (request) => {
    const result = await identity.getActiveOrganization(bearerToken(request));
    return {
      organization: {
        ...toOrganization(result.organization),
        owner: {
          memberId: result.owner.id,
          userId: result.owner.user_id,
          name: result.owner.name,
          email: result.owner.email,
          image: result.owner.image,
        },
      },
      currentMember: toMember(result.currentMember),
      currentMemberTeams: result.teams.map(toTeam),
    };
  });

  app.post('/v1/orgs/:organizationId/invitations', {
    onRequest: authenticate(),
    schema: {
      tags: ['Invitations'],
      operationId: 'createInvitation',
      summary: 'Invite someone by email (owners and admins)',
      description:
        'The `token` is shown only in this response; the invitation expires after 7 days. An address that belongs to a member ' +
        'of the organization already (active or suspended) is refused with 409 `already_member`, and nothing is stored. ' +
        'An invitation holds only while its sender may invite: removing or suspending them, or making them a plain member, ' +
        'ends the invitations they sent that were not accepted yet (accepting one is then 404 `invitation_not_found`). ' +
        'Owners and admins see the pending ones with listInvitations and end one with revokeInvitation.',
      params: orgParams,
      body: z.object({ email: emailSchema, role: assignableRoleSchema }),
      response: {
        201: z.object({ invitation: invitationSchema, token: z.string() }),
        ...commonErrorResponses,
        404: organizationNotFound,
        409: errorBodySchema.describe('already_member: the address belongs to a member of this organization'),
      },
    },
  }, async (request, reply) => {
    const result = await identity.createInvitation(callerOf(request), request.params.organizationId, request.body);
    return reply.status(201).send({ invitation: toInvitation(result.invitation), token: result.token });
  });

  app.get('/v1/orgs/:organizationId/invitations', {
    onRequest: authenticate(),
    schema: {
      tags: ['Invitations'],
      operationId: 'listInvitations',
      summary: 'List pending invitations (owners and admins); tokens are never shown again',
      description:
        'Only invitations that can still be accepted: not accepted, not expired, and not ended (revoked, or ended by a change of ' +
        'their sender or invitee, see createInvitation). Newest first; `limit` and `cursor` page as on the other lists, and ' +
        '`nextCursor` (null on the last page) continues with older ones. An invitation that stops being pending between two pages ' +
        'is left out of the later one. Owners and admins, with a session: like creating invitations, not with an API key.',
      params: orgParams,
      querystring: paginationQuerySchema,
      response: {
        200: z.object({
          invitations: z.array(invitationSchema).describe('Pending invitations, newest first; as createInvitation returns them, without the token'),
          nextCursor: z.string().nullable(),
        }),
        ...commonErrorResponses,
        404: organizationNotFound,
      },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await identity.listInvitations(callerOf(request), request.params.organizationId, { limit: limit + 1, after: afterFromCursor(cursor) });
    const page = pageOf(rows, limit);
    return { invitations: page.items.map(toInvitation), nextCursor: page.nextCursor };
  });

  app.delete('/v1/orgs/:organizationId/invitations/:invitationId', {
    onRequest: authenticate(),
    schema: {
      tags: ['Invitations'],
      operationId: 'revokeInvitation',
      summary: 'Revoke a pending invitation (owners and admins)',
      description:
        'Ends the invitation, whoever sent it: its token stops working, and accepting it is then 404 `invitation_not_found`, exactly ' +
        'as for an unknown token; it no longer appears in listInvitations. A membership an invitation already created is not ' +
        'touched (remove the member for that). Only a pending invitation of this organization can be revoked: an unknown id, one of ' +
        'another organization, or one already accepted, expired, ended or revoked is 404 `invitation_not_found` (so revoking twice ' +
        'is 404 the second time, as for API keys); an `invitationId` that is not an invitation id at all (`inv_` and 26 base32 ' +
        'characters) is 400 `invalid_request`. To change an invitation\'s address or role, revoke it and send a new one.',
      params: orgParams.extend({ invitationId: invitationIdSchema }),
      response: {
        204: noContent,
        ...commonErrorResponses,
        404: errorBodySchema.describe('organization_not_found, or invitation_not_found: no pending invitation with this id in this organization'),
      },
    },
  }, async (request, reply) => {
    await identity.revokeInvitation(callerOf(request), request.params.organizationId, request.params.invitationId);
    return reply.status(204).send(null);
  });

  app.post('/v1/invitations/:token/accept', {
    onRequest: authenticate(),
    schema: {
      tags: ['Invitations'],
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation sent to the caller\'s email',
      description:
        'When the accepting session has no usable active organization (none, or one the caller is no longer an active member of), ' +
        'the organization joined becomes its active one; otherwise the active organization is left as it is. ' +
        'Accepting one invitation ends the other pending invitations of the same address to that organization; removing a member ends them too, so only an invitation sent after a removal lets a removed member back in. ' +
        'Removing, suspending or demoting (to member) the one who sent an invitation ends it as well, and so does revoking it (revokeInvitation).',
      params: z.object({ token: z.string().min(1).max(200) }),
      response: {
        200: z.object({ member: memberSchema }),
        ...commonErrorResponses,
        404: errorBodySchema.describe('invitation_not_found: unknown, used, expired, ended or revoked'),
        409: errorBodySchema.describe('already_member'),
      },
    },
  }, async (request) => {
    const member = await identity.acceptInvitation(callerOf(request), request.params.token);
    return { member: toMember(member) };
  });

  app.get('/v1/orgs/:organizationId/members', {
    onRequest: authenticate({ allowApiKey: true }),
    schema: {
      tags: ['Members'],
      operationId: 'listMembers',
      summary: 'List the organization\'s members',
      description: 'Any member, with a session or an API key of this organization (`x-api-key`).',
      params: orgParams,
      querystring: paginationQuerySchema,
      response: {
        200: z.object({ members: z.array(memberSchema), nextCursor: z.string().nullable() }),
        ...commonErrorResponses,
        404: organizationNotFound,
      },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await identity.listMembers(callerOf(request), request.params.organizationId, { limit: limit + 1, after: afterFromCursor(cursor) });
    const page = pageOf(rows, limit);
    return { members: page.items.map(toMember), nextCursor: page.nextCursor };
  });

  const memberParams = orgParams.extend({ memberId: memberIdSchema });
  app.patch('/v1/orgs/:organizationId/members/:memberId', {
    onRequest: authenticate(),
    schema: {
      tags: ['Members'],
      operationId: 'changeMemberRole',
      summary: 'Change a member\'s role (owners and admins); the owner changes only by transfer',
      params: memberParams,
      body: z.object({ role: assignableRoleSchema }),
      response: {
        200: z.object({ member: memberSchema }),
        ...commonErrorResponses,
        404: errorBodySchema.describe('organization_not_found or member_not_found'),
        409: errorBodySchema.describe('owner_role_fixed'),
      },
    },
  }, async (request) => {
    const member = await identity.changeMemberRole(callerOf(request), request.params.organizationId, request.params.memberId, request.body.role);
    return { member: toMember(member) };
  });

  app.delete('/v1/orgs/:organizationId/members/:memberId', {
    onRequest: authenticate(),
    schema: {
      tags: ['Members'],
      operationId: 'removeMember',
      summary: 'Remove a member (owners and admins; anyone may remove themselves); the owner cannot be removed',
      params: memberParams,
      response: {
        204: noContent,
        ...commonErrorResponses,
        404: errorBodySchema.describe('organization_not_found or member_not_found'),
        409: errorBodySchema.describe('owner_cannot_be_removed'),
      },
    },
  }, async (request, reply) => {
    await identity.removeMember(callerOf(request), request.params.organizationId, request.params.memberId);
    return reply.status(204).send(null);
  });

  app.post('/v1/orgs/:organizationId/transfer-ownership', {
    onRequest: authenticate(),
    schema: {
      tags: ['Members'],
      operationId: 'transferOwnership',
      summary: 'Make another member the owner (owner only); the previous owner becomes an admin',
      params: orgParams,
      body: z.object({ memberId: memberIdSchema }),
      response: {
        200: z.object({ member: memberSchema }),
        ...commonErrorResponses,
        404: errorBodySchema.describe('organization_not_found or member_not_found'),
      },
    },
  }, async (request) => {
    const member = await identity.transferOwnership(callerOf(request), request.params.organizationId, request.body.memberId);
    return { member: toMember(member) };
  });

  app.post('/v1/orgs/:organizationId/teams', {
    onRequest: authenticate(),
    schema: {
      tags: ['Teams'],
      operationId: 'createTeam',
      summary: 'Create a team (owners and admins)',
      params: orgParams,
      body: z.object({ name: z.string().trim().min(1).max(200) }),
      response: {
        201: z.object({ team: teamSchema }),
        ...commonErrorResponses,
        404: organizationNotFound,
        409: errorBodySchema.describe('team_exists'),
      },
    },
  }, async (request, reply) => {
    const team = await identity.createTeam(callerOf(request), request.params.organizationId, request.body.name);
    return reply.status(201).send({ team: toTeam(team) });
  });

  app.get('/v1/orgs/:organizationId/teams', {
    onRequest: authenticate({ allowApiKey: true }),
    schema: {
      tags: ['Teams'],
      operationId: 'listTeams',
      summary: 'List the organization\'s teams with their member ids',
      description: 'Any member, with a session or an API key of this organization (`x-api-key`).',
      params: orgParams,
      querystring: paginationQuerySchema,
      response: {
        200: z.object({ teams: z.array(teamSchema.extend({ memberIds: z.array(z.string()) })), nextCursor: z.string().nullable() }),
        ...commonErrorResponses,
        404: organizationNotFound,
      },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await identity.listTeams(callerOf(request), request.params.organizationId, { limit: limit + 1, after: afterFromCursor(cursor) });
    const page = pageOf(rows, limit);
    return { teams: page.items.map((row) => ({ ...toTeam(row), memberIds: row.member_ids })), nextCursor: page.nextCursor };
  });

  const teamParams = orgParams.extend({ teamId: teamIdSchema });
  app.post('/v1/orgs/:organizationId/teams/:teamId/members', {
    onRequest: authenticate(),
    schema: {
      tags: ['Teams'],
      operationId: 'addTeamMember',
      summary: 'Add a member to a team (owners and admins)',
      params: teamParams,
      body: z.object({ memberId: memberIdSchema }),
      response: { 204: noContent, ...commonErrorResponses, 404: errorBodySchema.describe('organization_not_found, team_not_found or member_not_found') },
    },
  }, async (request, reply) => {
    await identity.addTeamMember(callerOf(request), request.params.organizationId, request.params.teamId, request.body.memberId);
    return reply.status(204).send(null);
  });

  app.delete('/v1/orgs/:organizationId/teams/:teamId/members/:memberId', {
    onRequest: authenticate(),
    schema: {
      tags: ['Teams'],
      operationId: 'removeTeamMember',
      summary: 'Remove a member from a team (owners and admins)',
      params: teamParams.extend({ memberId: memberIdSchema }),
      response: { 204: noContent, ...commonErrorResponses, 404: errorBodySchema.describe('organization_not_found, team_not_found or member_not_found') },
    },
  }, async (request, reply) => {
    await identity.removeTeamMember(callerOf(request), request.params.organizationId, request.params.teamId, request.params.memberId);
    return reply.status(204).send(null);
  });

  app.post('/v1/orgs/:organizationId/api-keys', {
    onRequest: authenticate(),
    schema: {
      tags: ['API Keys'],
      operationId: 'createApiKey',
      summary: 'Create an organization API key (owners and admins); `key` is shown only here',
      description: 'Send it as `x-api-key`. The routes that accept an API key list the `apiKey` scheme in their security requirements (listing members and teams); every other route takes a session.',
      params: orgParams,
      body: z.object({ name: z.string().trim().min(1).max(200), role: assignableRoleSchema }),
      response: { 201: z.object({ apiKey: apiKeySchema, key: z.string() }), ...commonErrorResponses, 404: organizationNotFound },
    },
  }, async (request, reply) => {
    const result = await identity.createApiKey(callerOf(request), request.params.organizationId, request.body);
    return reply.status(201).send({ apiKey: toApiKey(result.apiKey), key: result.key });
  });

  app.get('/v1/orgs/:organizationId/api-keys', {
    onRequest: authenticate(),
    schema: {
      tags: ['API Keys'],
      operationId: 'listApiKeys',
      summary: 'List active API keys (owners and admins); keys themselves are never shown again',
      params: orgParams,
      querystring: paginationQuerySchema,
      response: { 200: z.object({ apiKeys: z.array(apiKeySchema), nextCursor: z.string().nullable() }), ...commonErrorResponses, 404: organizationNotFound },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await identity.listApiKeys(callerOf(request), request.params.organizationId, { limit: limit + 1, after: afterFromCursor(cursor) });
    const page = pageOf(rows, limit);
    return { apiKeys: page.items.map(toApiKey), nextCursor: page.nextCursor };
  });

  app.delete('/v1/orgs/:organizationId/api-keys/:apiKeyId', {
    onRequest: authenticate(),
    schema: {
      tags: ['API Keys'],
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (owners and admins)',
      params: orgParams.extend({ apiKeyId: apiKeyIdSchema }),
      response: { 204: noContent, ...commonErrorResponses, 404: errorBodySchema.describe('organization_not_found or api_key_not_found') },
    },
  }, async (request, reply) => {
    await identity.revokeApiKey(callerOf(request), request.params.organizationId, request.params.apiKeyId);
    return reply.status(204).send(null);
  });

  app.put('/v1/admin/orgs/:organizationId/plan', {
    onRequest: authenticate(),
    schema: {
      tags: ['Admin'],
      operationId: 'setOrganizationPlan',
      summary: 'Set an organization\'s plan (instance administrators)',
      params: orgParams,
      body: z.object({ plan: planSchema }),
      response: { 200: z.object({ organization: organizationSchema }), ...commonErrorResponses, 404: organizationNotFound },
    },
  }, async (request) => {
    const caller = callerOf(request);
    if (!caller.isInstanceAdmin) throw forbidden('Only instance administrators set plans');
    const organization = await identity.setPlan(caller, request.params.organizationId, request.body.plan);
    return { organization: toOrganization(organization) };
  });
};
