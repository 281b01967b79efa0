// Requests written byte by byte on a socket of their own: for what fetch will not send (bodies longer
// or shorter than their Content-Length, bytes that are not UTF-8, requests that never finish).
import { connect } from 'node:net';

/**
 * Writes `head` then `body` on a new connection and resolves with everything read (latin1) once the
 * server closes it. With `end: false` the client never finishes its side: the request stays incomplete
 * until the server gives up on it.
 */
export function rawRequest(
  port: number,
  head: string,
  body: Buffer | string,
  options: { end?: boolean } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('end', () => resolve(data));
    socket.on('close', () => resolve(data));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(data) : reject(error),
    );
    socket.write(head);
    if (options.end === false) socket.write(body);
    else socket.end(body);
  });
}
