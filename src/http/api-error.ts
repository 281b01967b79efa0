/** An error a route means to return: it becomes `{ error: code, message?, ...extra }` with `statusCode`. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly extra: Record<string, unknown> | undefined;
  readonly hasMessage: boolean;
  /** Response headers that go with this error (Retry-After, RateLimit-*). */
  headers: Record<string, string> = {};

  constructor(statusCode: number, code: string, message?: string, extra?: Record<string, unknown>) {
    super(message ?? code);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.code = code;
    this.extra = extra;
    this.hasMessage = message !== undefined;
  }

  toBody(): { error: string; message?: string; [field: string]: unknown } {
    return { error: this.code, ...(this.hasMessage ? { message: this.message } : {}), ...this.extra };
  }
}

export interface ValidationDetail {
  message: string;
  path: (string | number)[];
  /** Which part of the request failed: body, querystring, params or headers. */
  in?: string;
}
