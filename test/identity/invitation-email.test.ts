// The invitation e-mail as a pure function: what a name can and cannot do to it, and the link's shape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { invitationAcceptUrl, invitationMail } from '../../src/modules/invitations/email.ts';

const base = {
  publicUrl: 'https://orgplane.example.test/',
  to: 'bea@example.test',
  organizationName: 'Acme',
  inviterName: 'Ada',
  role: 'member' as const,
  token: 'opi_org_x.y+z/=',
  expiresAt: new Date('2026-12-01T09:30:00Z'),
};

test('the link: the console page under PUBLIC_URL (one slash), token and address in the fragment only', () => {
  const url = new URL(invitationAcceptUrl(base.publicUrl, base.token, base.to));
  assert.equal(`${url.origin}${url.pathname}`, 'https://orgplane.example.test/invitations/accept');
  assert.equal(url.search, '');
  const fragment = new URLSearchParams(url.hash.slice(1));
  assert.equal(fragment.get('token'), base.token);
  assert.equal(fragment.get('email'), base.to);
});

test('names are text: HTML escaped in the HTML part, kept on one line in the subject and text', () => {
  const mail = invitationMail({
    ...base,
    inviterName: 'Eve\r\nBcc: victim@example.test\n<a href="https://evil.test">click</a>',
    organizationName: 'Acme & <b>Co</b>',
  });
  assert.doesNotMatch(mail.subject, /[\r\n]/);
  assert.ok(!mail.html.includes('<a href="https://evil.test">'), 'no link of the inviter in the HTML');
  assert.ok(mail.html.includes('&lt;a href=&quot;https://evil.test&quot;&gt;'));
  assert.ok(mail.html.includes('Acme &amp; &lt;b&gt;Co&lt;/b&gt;'));
  assert.equal(mail.html.match(/<a /g)?.length, 1, 'one link: the accept link');
  const firstLine = mail.text.split('\n')[0]!;
  assert.ok(firstLine.includes('Bcc: victim@example.test'), 'the name stays within the first line');
  assert.ok(
    !mail.text
      .split('\n')
      .slice(1)
      .some((line) => line.startsWith('Bcc:')),
  );
  assert.ok(mail.text.includes('2026-12-01 09:30 UTC'));
  assert.ok(mail.text.includes('as a member'));
  assert.ok(invitationMail({ ...base, role: 'admin' }).text.includes('as an admin'));
});
