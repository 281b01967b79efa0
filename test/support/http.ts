export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A raw body sent as-is instead of JSON (bytes for what is not UTF-8). */
  raw?: string | Uint8Array;
}

/** A small client for one base URL and (optionally) one session token, over real HTTP. */
export function api(baseUrl: string, token?: string) {
  async function send<T>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...options.headers,
    };
    let payload: string | Uint8Array | undefined;
    if (options.raw !== undefined) payload = options.raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(new URL(path, baseUrl), {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
  return {
    get: <T = any>(path: string, options?: RequestOptions) => send<T>('GET', path, undefined, options),
    delete: <T = any>(path: string, options?: RequestOptions) => send<T>('DELETE', path, undefined, options),
    post: <T = any>(path: string, body?: unknown, options?: RequestOptions) => send<T>('POST', path, body, options),
    put: <T = any>(path: string, body?: unknown, options?: RequestOptions) => send<T>('PUT', path, body, options),
    patch: <T = any>(path: string, body?: unknown, options?: RequestOptions) => send<T>('PATCH', path, body, options),
    send,
  };
}
