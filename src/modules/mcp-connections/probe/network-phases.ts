// The network phases of the probe: CONFIGURATION, NETWORK_DNS, NETWORK_TCP, NETWORK_TLS.

import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import { OutboundBlockedError, rangeLabel } from '../../../platform/outbound.ts';
import { HEADER_VALUE_RULE, isHeaderValue } from './credentials.ts';
import { type PhaseFunction, withDeadline, fail, timeoutFailure, errorCode, PhaseTimeout } from './phase-kit.ts';

// CONFIGURATION: the URL is an absolute http(s) URL without embedded credentials, and the
// credential the auth type needs is present.
export const configuration: PhaseFunction = async (ctx) => {
  let url: URL;
  try {
    url = new URL(ctx.rawUrl);
  } catch (error) {
    fail(
      'CONFIGURATION',
      'configuration',
      'invalid_url',
      'organization_admin',
      'Enter the absolute URL of the MCP endpoint, e.g. https://mcp.example.com/mcp.',
      'The connection URL is not a valid absolute URL.',
      { cause: error },
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail(
      'CONFIGURATION',
      'configuration',
      'unsupported_scheme',
      'organization_admin',
      'Use an http:// or https:// URL.',
      `The URL scheme ${url.protocol} is not supported; MCP over HTTP needs http or https.`,
    );
  }
  if (url.username || url.password) {
    fail(
      'CONFIGURATION',
      'configuration',
      'credentials_in_url',
      'organization_admin',
      'Remove user:password from the URL and put the secret in the API key field.',
      'The URL carries credentials; they would be sent and logged with every request.',
    );
  }
  if (ctx.authType === 'apikey' && !ctx.apiKey) {
    fail(
      'CONFIGURATION',
      'configuration',
      'api_key_missing',
      'organization_admin',
      'Provide the API key for this server.',
      'The connection uses API-key authentication but no API key is available.',
    );
  }
  // Refused before any request: fetch would throw an error that quotes the whole header value.
  // (The API refuses such keys at input; this covers stored ones, tokens and the CLI.)
  if (ctx.authType === 'apikey' && ctx.apiKey && !isHeaderValue(ctx.apiKey)) {
    fail(
      'CONFIGURATION',
      'configuration',
      'invalid_api_key',
      'organization_admin',
      `Enter the API key again; it may contain only ${HEADER_VALUE_RULE}.`,
      'The API key contains characters that cannot be sent in an HTTP header.',
    );
  }
  if (ctx.bearerToken && !isHeaderValue(ctx.bearerToken)) {
    fail(
      'CONFIGURATION',
      'configuration',
      'invalid_credential',
      'organization_admin',
      'Connect again to obtain a new credential.',
      'The stored credential contains characters that cannot be sent in an HTTP header.',
    );
  }
  url.hash = '';
  ctx.url = url;
};

// NETWORK_DNS: the host name resolves, and every address it resolves to may be dialed.
export const networkDns: PhaseFunction = async (ctx) => {
  const url = ctx.url!;
  try {
    ctx.addresses = await withDeadline(ctx, 'NETWORK_DNS', () => ctx.outbound.resolve(url.hostname));
  } catch (error) {
    if (error instanceof PhaseTimeout) timeoutFailure('NETWORK_DNS', 'the DNS lookup of the host name', error);
    if (error instanceof OutboundBlockedError) {
      fail(
        'NETWORK_DNS',
        'network_policy',
        'address_blocked',
        'network_admin',
        'Use a publicly reachable endpoint, or have the operator allow this network in ALLOWED_PRIVATE_NETWORKS.',
        `The host resolves to an address in a ${rangeLabel(error.range ?? 'private')} range, which this service does not dial.`,
        { cause: error },
      );
    }
    const code = errorCode(error);
    if (code === 'EAI_AGAIN' || code === 'ETIMEOUT' || code === 'ESERVFAIL') {
      fail(
        'NETWORK_DNS',
        'dns',
        'dns_unavailable',
        'network_admin',
        'The DNS lookup failed temporarily; retry, and check the resolver if it persists.',
        'The host name could not be resolved right now.',
        { retryable: true, cause: error },
      );
    }
    fail(
      'NETWORK_DNS',
      'dns',
      'dns_not_found',
      'organization_admin',
      'Check the host name in the URL.',
      'The host name does not resolve to any address.',
      { cause: error },
    );
  }
};

function defaultPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

// NETWORK_TCP: a TCP connection opens to one of the checked addresses.
export const networkTcp: PhaseFunction = async (ctx) => {
  const port = defaultPort(ctx.url!);
  let lastError: unknown;
  for (const { address } of ctx.addresses!.slice(0, 4)) {
    try {
      await withDeadline(ctx, 'NETWORK_TCP', (signal) =>
        openSocket(() => netConnect({ host: address, port }), 'connect', signal),
      );
      return;
    } catch (error) {
      lastError = error;
      if (error instanceof PhaseTimeout) break;
    }
  }
  if (lastError instanceof PhaseTimeout) {
    fail(
      'NETWORK_TCP',
      'network',
      'connection_timeout',
      'network_admin',
      'Check that a firewall lets this service reach the server, then retry.',
      `No TCP connection to port ${port} within the time allowed.`,
      { retryable: true, cause: lastError },
    );
  }
  const code = errorCode(lastError);
  if (code === 'ECONNREFUSED') {
    fail(
      'NETWORK_TCP',
      'network',
      'connection_refused',
      'vendor',
      `Check that the MCP server is running and listening on port ${port}.`,
      `The server refused the connection on port ${port}.`,
      { retryable: true, cause: lastError },
    );
  }
  fail(
    'NETWORK_TCP',
    'network',
    'host_unreachable',
    'network_admin',
    'Check routing and firewalls between this service and the server.',
    `The server could not be reached on port ${port}${code ? ` (${code})` : ''}.`,
    { retryable: true, cause: lastError },
  );
};

/** Opens a socket, waits for `event`, and closes it: the check is the handshake itself. */
function openSocket(open: () => Socket, event: 'connect' | 'secureConnect', signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = open();
    const onAbort = () => socket.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once(event, () => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(error);
    });
  });
}

const UNTRUSTED_CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

// NETWORK_TLS: for https, the handshake succeeds and the certificate is valid for the host name.
export const networkTls: PhaseFunction = async (ctx) => {
  const url = ctx.url!;
  if (url.protocol !== 'https:') return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = ctx.addresses![0]!.address;
  try {
    await withDeadline(ctx, 'NETWORK_TLS', (signal) =>
      openSocket(
        () =>
          tlsConnect({
            host: address,
            port: defaultPort(url),
            // SNI and the certificate check use the name from the URL (servername); the socket goes to the checked address.
            ...(isIP(host) === 0 ? { servername: host } : {}),
            ALPNProtocols: ['http/1.1'],
            // The same trust as the HTTP requests that follow (extra CAs exist only in tests).
            ...(ctx.outbound.ca ? { ca: ([] as string[]).concat(ctx.outbound.ca, rootCertificates) } : {}),
          }),
        'secureConnect',
        signal,
      ),
    );
  } catch (error) {
    if (error instanceof PhaseTimeout) timeoutFailure('NETWORK_TLS', 'the TLS handshake', error);
    const code = errorCode(error) ?? '';
    if (UNTRUSTED_CERT_CODES.has(code)) {
      fail(
        'NETWORK_TLS',
        'tls',
        'tls_certificate_untrusted',
        'vendor',
        'Serve a certificate issued by a publicly trusted authority.',
        'The server certificate is not signed by a trusted certificate authority (self-signed or incomplete chain).',
        { cause: error },
      );
    }
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      fail(
        'NETWORK_TLS',
        'tls',
        'tls_certificate_expired',
        'vendor',
        'Renew the server certificate.',
        'The server certificate is expired or not yet valid.',
        { cause: error },
      );
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      fail(
        'NETWORK_TLS',
        'tls',
        'tls_hostname_mismatch',
        'vendor',
        'Serve a certificate that names this host, or use the host name the certificate names.',
        'The server certificate does not match the host name of the URL.',
        { cause: error },
      );
    }
    fail(
      'NETWORK_TLS',
      'tls',
      'tls_handshake_failed',
      'vendor',
      'Check the TLS configuration of the server (protocols, ciphers, certificate).',
      'The TLS handshake with the server failed.',
      { retryable: true, cause: error },
    );
  }
};
