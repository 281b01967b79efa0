// A real SMTP server on loopback (the smtp-server package) that keeps what it receives, parsed by
// mailparser as a mail client would: the tests read the message an invitation sent.
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  url: string;
  received: ReceivedMail[];
  /** Resolves with the next message to arrive (or one already there beyond `already`). */
  next(already?: number): Promise<ReceivedMail>;
  /** Answers every RCPT TO with this SMTP error from now on (null: accept again). */
  refuseRecipients(reply: { code: number; message: string } | null): void;
  close(): Promise<void>;
}

export async function startSmtpServer(options: { user?: string; password?: string } = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiting: Array<() => void> = [];
  let refusal: { code: number; message: string } | null = null;
  const server = new SMTPServer({
    secure: false,
    // Loopback only, without TLS: STARTTLS is not offered, and a plain login is allowed.
    disabledCommands: ['STARTTLS'],
    authOptional: !options.user,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(_address, _session, callback) {
      if (!refusal) return callback();
      const error = new Error(refusal.message) as Error & { responseCode: number };
      error.responseCode = refusal.code;
      callback(error);
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          received.push({
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            parsed,
          });
          for (const wake of waiting.splice(0)) wake();
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = options.user
    ? `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@`
    : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    received,
    async next(already = received.length) {
      while (received.length <= already) await new Promise<void>((resolve) => waiting.push(resolve));
      return received[already]!;
    },
    refuseRecipients(reply) {
      refusal = reply;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
