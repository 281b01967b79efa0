// The HTTP parser's refusals, before Fastify sees a request: written straight to the socket.
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { httpErrors } from './error-codes.ts';
import { unreadableRequest } from './errors.ts';

/**
 * Connections with a request in flight whose body is capped: bytes that follow its declared
 * Content-Length and are no request are the rest of a body larger than declared, which the cap
 * refuses (413) like any other. Set by such a route while its request is being handled.
 */
export const connectionsWithCappedBody = new WeakSet<Socket>();

/**
 * How a part of the server with its own error dialect (SCIM under /scim/v2) answers a request the HTTP
 * parser refused before routing: `status` and a human `message` in, its content type and body out.
 */
export interface PreRoutingDialect {
  /** Paths it answers for: exactly this, or under it (`/scim/v2`, `/scim/v2/...`, `/scim/v2?...`). */
  prefix: string;
  answer(status: number, message: string): { contentType: string; body: unknown };
}

/**
 * The request line's path, when the bytes the parser was given when it failed begin with one
 * (absolute-form targets give their path), and the line's length (infinite when its end is not among
 * those bytes). Undefined when those bytes are not the start of a request (the rest of a header
 * block that arrived in several pieces, say).
 */
export function requestLineOf(raw: Buffer | undefined): { path: string; length: number } | undefined {
  if (!raw || raw.length === 0) return undefined;
  const text = raw.subarray(0, 65_536).toString('latin1');
  const match = /^(?:\r?\n)*[A-Z]{1,20} ([^\s]+)/.exec(text);
  if (!match) return undefined;
  let path = match[1]!;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return undefined;
    }
  }
  const end = text.indexOf('\n', match.index + match[0].length);
  return { path, length: end === -1 ? Number.POSITIVE_INFINITY : end - match.index };
}

const underPrefix = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);

/**
 * Errors the HTTP parser raises before Fastify sees a request (oversized headers or request line,
 * malformed HTTP): written straight to the socket, in the API's error shape, or in a dialect's own for
 * a request whose path (read from the raw bytes, when they hold the request line) is under its prefix.
 * A request line that alone exceeds the parser's limit (Node's maxHeaderSize, which counts it) is 414;
 * a header block, 431.
 */
export function createClientErrorHandler(dialects: readonly PreRoutingDialect[] = []) {
  return function clientErrorHandler(failure: Error, socket: Socket) {
    // Node's parser errors carry their code and the bytes it was given (rawPacket).
    const error = failure as NodeJS.ErrnoException & { rawPacket?: Buffer };
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const line = requestLineOf(error.rawPacket);
    const [status, reason, body]: [number, string, { error: string; message?: string; [field: string]: unknown }] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', httpErrors.request_timeout('The request took too long to arrive').toBody()]
        : error.code === 'HPE_HEADER_OVERFLOW' && line && line.length >= maxHeaderSize
          ? [414, 'URI Too Long', httpErrors.uri_too_long('The request line is too long').toBody()]
          : error.code === 'HPE_HEADER_OVERFLOW'
            ? [
                431,
                'Request Header Fields Too Large',
                httpErrors.request_header_fields_too_large('The request line or headers are too large').toBody(),
              ]
            : connectionsWithCappedBody.has(socket)
              ? [413, 'Payload Too Large', httpErrors.payload_too_large().toBody()]
              : [400, 'Bad Request', unreadableRequest('The request is not valid HTTP').toBody()];
    const dialect = line ? dialects.find((candidate) => underPrefix(line.path, candidate.prefix)) : undefined;
    const answer = dialect ? dialect.answer(status, body.message ?? reason) : { contentType: 'application/json', body };
    const text = JSON.stringify(answer.body);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: ${answer.contentType}\r\nConnection: close\r\n\r\n${text}`,
      );
    }
    socket.destroy(error);
  };
}
