// Outgoing e-mail over SMTP (SMTP_URL, MAIL_FROM): what orgplane sends to people, such as an invitation.
// Without SMTP_URL nothing is sent and every caller says so: the person who acted still gets what the
// message would have carried (an invitation's link to copy), so an instance without mail works the same.
import nodemailer from 'nodemailer';

export interface OutgoingMail {
  to: string;
  subject: string;
  /** Plain text, for every mail client; the HTML part says the same. */
  text: string;
  html: string;
}

/** What became of one message: sent (the server took it), not configured, or refused by the server. */
export type MailOutcome = { status: 'sent' } | { status: 'not_configured' } | { status: 'failed'; reason: string };

export interface Mailer {
  readonly configured: boolean;
  send(mail: OutgoingMail): Promise<MailOutcome>;
  close(): void;
}

export interface MailerSettings {
  /** smtp://user:password@host:587 (STARTTLS when offered) or smtps://...:465 (TLS); null: no mail. */
  smtpUrl: string | null;
  /** The From address: `orgplane <noreply@example.com>`. */
  from: string;
  /** How long one SMTP conversation may take before the send is given up (ms). */
  timeoutMs?: number;
}

export function createMailer(settings: MailerSettings): Mailer {
  if (!settings.smtpUrl) {
    return { configured: false, send: async () => ({ status: 'not_configured' }), close() {} };
  }
  const timeout = settings.timeoutMs ?? 10_000;
  const url = new URL(settings.smtpUrl);
  const transport = nodemailer.createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
    secure: url.protocol === 'smtps:',
    ...(url.username
      ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
      : {}),
    // A slow or silent mail server must not hold a request: the caller gets `failed` instead.
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  return {
    configured: true,
    async send(mail) {
      try {
        await transport.sendMail({ from: settings.from, ...mail });
        return { status: 'sent' };
      } catch (error) {
        // The server's answer (e.g. "550 mailbox unavailable"), never the credentials of SMTP_URL.
        const reason = error instanceof Error ? error.message : String(error);
        return { status: 'failed', reason: reason.slice(0, 300) };
      }
    },
    close: () => transport.close(),
  };
}
