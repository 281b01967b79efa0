// The invitation e-mail: who invited whom to which organization, the link that accepts it and when it
// expires, in plain text and HTML. The token travels in the link's fragment (after #), which browsers
// never send to a server: not in access logs, proxies or Referer headers, only to the console's page.
import type { Role } from '../../http/caller.ts';
import type { OutgoingMail } from '../../platform/mailer.ts';

export interface InvitationMailInput {
  publicUrl: string;
  to: string;
  organizationName: string;
  inviterName: string;
  role: Role;
  token: string;
  expiresAt: Date;
}

/**
 * The console page that accepts an invitation, with the token in the fragment, and the invited address,
 * which the page offers to sign in or sign up with (the server alone decides whether it may accept).
 */
export function invitationAcceptUrl(publicUrl: string, token: string, email: string): string {
  const fragment = new URLSearchParams({ token, email });
  return `${publicUrl.replace(/\/+$/, '')}/invitations/accept#${fragment}`;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!,
  );

/** A name is its owner's own words: kept on one line, so it cannot forge a header-like line or a second paragraph. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 200);

export function invitationMail(input: InvitationMailInput): OutgoingMail {
  const url = invitationAcceptUrl(input.publicUrl, input.token, input.to);
  const organization = oneLine(input.organizationName);
  const inviter = oneLine(input.inviterName);
  const role = input.role === 'admin' ? 'an admin' : 'a member';
  const expires = `${input.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const text = [
    `${inviter} invited you to join ${organization} on orgplane as ${role}.`,
    '',
    'Accept the invitation:',
    url,
    '',
    `The link works until ${expires}, once, for ${input.to}. If you did not expect it, ignore this message.`,
  ].join('\n');
  const html = [
    `<p>${escapeHtml(inviter)} invited you to join <strong>${escapeHtml(organization)}</strong> on orgplane as ${role}.</p>`,
    `<p><a href="${escapeHtml(url)}">Accept the invitation</a></p>`,
    `<p>The link works until ${expires}, once, for ${escapeHtml(input.to)}. If you did not expect it, ignore this message.</p>`,
  ].join('\n');
  return { to: input.to, subject: `${inviter} invited you to ${organization} on orgplane`, text, html };
}
