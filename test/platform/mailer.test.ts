// The mailer against a real SMTP server on loopback: what arrives, with and without authentication,
// and what a caller hears when the server refuses, is silent or is not configured.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { createMailer } from '../../src/platform/mailer.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

const mail = {
  to: 'bea@example.test',
  subject: 'Join Acme on orgplane',
  text: 'Ada invited you. Accept: https://orgplane.example.test/invitations/accept#opi_x',
  html: '<p>Ada invited you. <a href="https://orgplane.example.test/invitations/accept#opi_x">Accept</a></p>',
};

test('a message reaches the SMTP server whole: envelope, From, To, subject, the text and the HTML part', async () => {
  const smtp = await startSmtpServer({ user: 'orgplane', password: 'p@ss:word/1' });
  const mailer = createMailer({ smtpUrl: smtp.url, from: 'orgplane <noreply@orgplane.example.test>' });
  try {
    assert.equal(mailer.configured, true);
    assert.deepEqual(await mailer.send(mail), { status: 'sent' });
    const [received] = smtp.received;
    assert.ok(received);
    assert.equal(received.envelopeFrom, 'noreply@orgplane.example.test');
    assert.deepEqual(received.envelopeTo, ['bea@example.test']);
    assert.equal(received.parsed.subject, mail.subject);
    assert.deepEqual(received.parsed.from?.value, [{ name: 'orgplane', address: 'noreply@orgplane.example.test' }]);
    assert.equal(received.parsed.text?.trim(), mail.text);
    assert.equal(received.parsed.html, mail.html);
  } finally {
    mailer.close();
    await smtp.close();
  }
});

test('wrong SMTP credentials, a refused recipient: `failed` with the server answer, never the password', async () => {
  const smtp = await startSmtpServer({ user: 'orgplane', password: 'right-password' });
  const wrong = createMailer({ smtpUrl: smtp.url.replace('right-password', 'wrong-password'), from: 'noreply@x.test' });
  const right = createMailer({ smtpUrl: smtp.url, from: 'noreply@x.test' });
  try {
    const refused = await wrong.send(mail);
    assert.equal(refused.status, 'failed');
    assert.match((refused as { reason: string }).reason, /535/);
    assert.doesNotMatch(JSON.stringify(refused), /wrong-password|right-password/);
    smtp.refuseRecipients({ code: 550, message: 'No such mailbox here' });
    const bounced = await right.send(mail);
    assert.equal(bounced.status, 'failed');
    assert.match((bounced as { reason: string }).reason, /550|No such mailbox/);
    assert.equal(smtp.received.length, 0);
  } finally {
    wrong.close();
    right.close();
    await smtp.close();
  }
});

test('a server that accepts the connection and never greets: `failed` after the timeout, not a hung request', async () => {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: 'noreply@x.test', timeoutMs: 300 });
  try {
    const outcome = await mailer.send(mail);
    assert.equal(outcome.status, 'failed');
  } finally {
    mailer.close();
    for (const socket of sockets) socket.destroy();
    silent.close();
  }
});

test('without SMTP_URL nothing is sent and the caller is told so', async () => {
  const mailer = createMailer({ smtpUrl: null, from: 'noreply@x.test' });
  assert.equal(mailer.configured, false);
  assert.deepEqual(await mailer.send(mail), { status: 'not_configured' });
});
