// Invitations e-mailed through a real SMTP server on loopback (SMTP_URL): what the invitee receives,
// the link in it joining, a resend mailing a new link, and a mail server that refuses: the invitation
// stands, the caller is told, the link comes back to copy, and neither token nor link reaches the log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTenant, signUp, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

describe('invitations: e-mail', () => {
  let smtp: TestSmtpServer;
  let app: TestApp;
  let tenant: Tenant;
  before(async () => {
    smtp = await startSmtpServer({ user: 'orgplane', password: 'smtp-secret' });
    app = await startTestApp({ mail: { smtpUrl: smtp.url, from: 'orgplane <noreply@orgplane.example.test>' } });
    tenant = await createTenant(app.url);
  });
  after(async () => {
    await app?.close();
    await smtp?.close();
  });
  const linkIn = (text: string) => text.match(/https?:\/\/\S+\/invitations\/accept#token=\S+/)?.[0];

  it('the invitee receives who invited them, to which organization, the link and the expiry, in text and HTML; the link joins', async () => {
    const invitee = await signUp(app.url, 'mailed');
    const already = smtp.received.length;
    const created = await api(app.url, tenant.admin.token).post(`/v1/orgs/${tenant.orgId}/invitations`, {
      email: invitee.email,
      role: 'admin',
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.delivery, { email: 'sent' });
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const mail = await smtp.next(already);
    const organization = (await api(app.url, tenant.owner.token).get('/v1/org')).body.organization.name as string;
    assert.deepEqual(mail.envelopeTo, [invitee.email]);
    assert.equal(mail.envelopeFrom, 'noreply@orgplane.example.test');
    assert.equal(mail.parsed.subject, `${tenant.admin.name} invited you to ${organization} on orgplane`);
    const text = mail.parsed.text ?? '';
    const html = String(mail.parsed.html);
    for (const part of [text, html]) {
      assert.ok(part.includes(tenant.admin.name), 'names who invited');
      assert.ok(part.includes(organization), 'names the organization');
      assert.ok(part.includes(`${created.body.invitation.expiresAt.slice(0, 16).replace('T', ' ')} UTC`), 'the expiry');
      assert.ok(part.includes('an admin'), 'the role');
    }
    assert.equal(linkIn(text), created.body.acceptUrl);
    assert.ok(html.includes(`href="${created.body.acceptUrl.replaceAll('&', '&amp;')}"`));
    // The token is in the fragment, which a browser never sends: the page's path carries nothing secret.
    const url = new URL(created.body.acceptUrl);
    assert.equal(url.origin + url.pathname, `${app.config.publicUrl}/invitations/accept`);
    assert.equal(url.search, '');
    const fragment = new URLSearchParams(url.hash.slice(1));
    const token = fragment.get('token')!;
    assert.equal(token, created.body.token);
    assert.equal(fragment.get('email'), invitee.email);
    const joined = await api(app.url, invitee.token).post(`/v1/invitations/${encodeURIComponent(token)}/accept`);
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.member.role, 'admin');
  });

  it('a resend mails the new link; the link of the first mail no longer joins', async () => {
    const invitee = await signUp(app.url, 'remailed');
    const before = smtp.received.length;
    const created = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, {
      email: invitee.email,
      role: 'member',
    });
    const first = linkIn((await smtp.next(before)).parsed.text ?? '')!;
    const resent = await api(app.url, tenant.owner.token).post(
      `/v1/orgs/${tenant.orgId}/invitations/${created.body.invitation.id}/resend`,
    );
    assert.equal(resent.status, 200, resent.text);
    assert.deepEqual(resent.body.delivery, { email: 'sent' });
    const second = await smtp.next(before + 1);
    assert.deepEqual(second.envelopeTo, [invitee.email]);
    assert.equal(linkIn(second.parsed.text ?? ''), resent.body.acceptUrl);
    assert.notEqual(resent.body.acceptUrl, first);
    const tokenOf = (link: string) => new URLSearchParams(new URL(link).hash.slice(1)).get('token')!;
    const stale = await api(app.url, invitee.token).post(`/v1/invitations/${tokenOf(first)}/accept`);
    assert.deepEqual([stale.status, stale.body.error], [404, 'invitation_not_found'], stale.text);
    const joined = await api(app.url, invitee.token).post(`/v1/invitations/${tokenOf(resent.body.acceptUrl)}/accept`);
    assert.equal(joined.status, 200, joined.text);
  });

  it('a mail server that refuses: 201 with `failed`, the invitation kept and its link working; no token in the log', async () => {
    const invitee = await signUp(app.url, 'bounced');
    smtp.refuseRecipients({ code: 550, message: 'No such mailbox here' });
    try {
      const created = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, {
        email: invitee.email,
        role: 'member',
      });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.delivery, { email: 'failed' });
      assert.equal(new URLSearchParams(new URL(created.body.acceptUrl).hash.slice(1)).get('token'), created.body.token);
      assert.ok(
        !created.text.includes('No such mailbox'),
        "the mail server's words are the operator's, not in the answer",
      );
      const resent = await api(app.url, tenant.owner.token).post(
        `/v1/orgs/${tenant.orgId}/invitations/${created.body.invitation.id}/resend`,
      );
      assert.equal(resent.status, 200, resent.text);
      assert.deepEqual(resent.body.delivery, { email: 'failed' });
      const logged = app.logLines.filter((line) => line.msg === 'invitation e-mail not sent');
      assert.ok(
        logged.some(
          (line) => line.invitationId === created.body.invitation.id && /550|No such mailbox/.test(String(line.reason)),
        ),
        'the failure is logged with the server answer',
      );
      for (const secret of [created.body.token, resent.body.token, 'smtp-secret'])
        assert.ok(!app.logText().includes(secret), 'a token or the SMTP password reached the log');
      smtp.refuseRecipients(null);
      const listed = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/invitations`);
      assert.ok(listed.body.invitations.some((each: { id: string }) => each.id === created.body.invitation.id));
      const joined = await api(app.url, invitee.token).post(`/v1/invitations/${resent.body.token}/accept`);
      assert.equal(joined.status, 200, joined.text);
    } finally {
      smtp.refuseRecipients(null);
    }
  });
});
