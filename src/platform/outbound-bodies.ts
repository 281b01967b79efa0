// The bodies of the outbound client's answers (outbound.ts): read against the size cap, and ending the
// exchange's timeout once read whole.
import { OutboundResponseTooLargeError } from './outbound-errors.ts';

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * Re-creates the response as a global Response (callers and the MCP SDK expect the runtime's own
 * class) whose body counts bytes against the cap and ends the timeout when fully read.
 */
export function wrapResponse(
  response: Response,
  url: URL,
  maxBytes: number,
  timer: ReturnType<typeof setTimeout> | undefined,
  timeoutSignal: AbortSignal,
): Response {
  let body: ReadableStream<Uint8Array> | null = null;
  if (response.body && !NULL_BODY_STATUSES.has(response.status)) {
    let seen = 0;
    const reader = response.body.getReader();
    body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            if (timer) clearTimeout(timer);
            controller.close();
            return;
          }
          seen += value.byteLength;
          if (seen > maxBytes) {
            if (timer) clearTimeout(timer);
            await reader.cancel().catch(() => {});
            controller.error(new OutboundResponseTooLargeError(maxBytes));
            return;
          }
          controller.enqueue(value);
        } catch (error) {
          if (timer) clearTimeout(timer);
          controller.error(timeoutSignal.aborted ? timeoutSignal.reason : error);
        }
      },
      cancel(reason) {
        if (timer) clearTimeout(timer);
        return reader.cancel(reason);
      },
    });
  } else if (timer) {
    clearTimeout(timer);
  }
  const wrapped = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(wrapped, 'url', { value: url.href });
  return wrapped;
}

export async function readCapped(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.byteLength;
    if (seen > maxBytes) throw new OutboundResponseTooLargeError(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
