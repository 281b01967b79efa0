// A real authoritative-style DNS server on loopback for tests (dns2), serving what a test tells it:
// TXT records (single- or multi-string), SERVFAIL, NOTIMP, NXDOMAIN, NODATA, or silence (no answer at all,
// so the client times out). UDP and TCP listen on the same random port, as resolvers expect, so
// answers too long for a UDP datagram are fetched over TCP after truncation.
import dns2 from 'dns2';

const { Packet } = dns2;

export type DnsBehaviour =
  | { kind: 'txt'; records: Array<string | string[]> }
  | { kind: 'servfail' }
  /** The server does not implement the query: an answer that retrying will not change. */
  | { kind: 'notimp' }
  | { kind: 'nxdomain' }
  | { kind: 'nodata' }
  | { kind: 'silent' };

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, ready for DNS_SERVERS / Resolver#setServers. */
  readonly address: string;
  readonly port: number;
  /** Sets the TXT records of a name (case-insensitive, trailing dot optional). */
  setTxt(name: string, records: Array<string | string[]>): void;
  setBehaviour(name: string, behaviour: DnsBehaviour): void;
  clear(name: string): void;
  /** Queries received, as `TYPE name`. */
  readonly queries: string[];
  close(): Promise<void>;
}

const key = (name: string) => name.toLowerCase().replace(/\.$/, '');

export async function startDnsServer(attempt = 0): Promise<TestDnsServer> {
  const names = new Map<string, DnsBehaviour>();
  const queries: string[] = [];

  const handle = (request: any, send: (response: any) => void) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    if (!question) {
      response.header.rcode = 1; // FORMERR
      send(response);
      return;
    }
    queries.push(`${question.type === Packet.TYPE.TXT ? 'TXT' : question.type} ${question.name}`);
    const behaviour = names.get(key(question.name));
    // Unknown names are NXDOMAIN, like a real authoritative server for the zone.
    if (!behaviour || behaviour.kind === 'nxdomain') {
      response.header.rcode = 3; // NXDOMAIN
      send(response);
      return;
    }
    switch (behaviour.kind) {
      case 'silent':
        return; // never answer: the client's timeout is what is being tested
      case 'servfail':
        response.header.rcode = 2; // SERVFAIL
        send(response);
        return;
      case 'notimp':
        response.header.rcode = 4; // NOTIMP
        send(response);
        return;
      case 'nodata':
        send(response); // NOERROR with an empty answer section
        return;
      case 'txt':
        if (question.type === Packet.TYPE.TXT) {
          for (const record of behaviour.records) {
            (response.answers as unknown[]).push({
              name: question.name,
              type: Packet.TYPE.TXT,
              class: Packet.CLASS.IN,
              ttl: 60,
              data: record,
            });
          }
        }
        send(response);
        return;
    }
  };

  const server = dns2.createServer({ udp: true, tcp: true, handle });
  server.on('requestError', () => {});
  // dns2 re-emits its sockets' errors here; with no listener a port already taken (handled below by
  // binding again) became an uncaught exception that stalled the test using this server.
  server.on('error', () => {});
  const parts = (server as unknown as { servers: { udp: unknown; tcp: unknown } }).servers;
  const udp = parts.udp as unknown as import('node:dgram').Socket;
  const tcp = parts.tcp as unknown as import('node:net').Server;
  const sockets = new Set<import('node:net').Socket>();
  tcp.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Bind UDP on a random port, then TCP on the same number (start over if that one is taken).
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(0, '127.0.0.1', () => resolve());
  });
  const port = udp.address().port;
  const ok = await new Promise<boolean>((resolve) => {
    tcp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!ok) {
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (attempt >= 10) throw new Error('could not bind a DNS test server on one UDP+TCP port');
    return startDnsServer(attempt + 1);
  }
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    setTxt: (name, records) => names.set(key(name), { kind: 'txt', records }),
    setBehaviour: (name, behaviour) => names.set(key(name), behaviour),
    clear: (name) => names.delete(key(name)),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}
