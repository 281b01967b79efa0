// Errors of the OAuth flow. Each carries the diagnostic phase it failed in (the spec's phase
// values) and a stable snake_case code, so routes can turn it into a Diagnostic or an ApiError
// without parsing messages. Messages never carry tokens, secrets or raw response bodies: an
// authorization server is third-party input and could echo what we sent it.

export type OAuthPhase =
  | 'AUTH_RESOURCE_DISCOVERY'
  | 'AUTH_ISSUER_DISCOVERY'
  | 'AUTH_CLIENT_REGISTRATION'
  | 'AUTH_USER_OR_WORKLOAD'
  | 'AUTH_TOKEN_ACQUISITION'
  | 'AUTH_RESOURCE_VALIDATION'
  | 'CONTINUITY_REFRESH';

export type CredentialHealthReason =
  | 'authorization_rejected'
  | 'credential_expired'
  | 'post_authorization_validation_failed';

export interface OAuthFlowErrorOptions {
  httpStatus?: number;
  /** The OAuth `error` value the server answered with (RFC 6749 §5.2), when there was one. */
  oauthError?: string;
  retryable?: boolean;
  /** Set when a configured authorizationServerIssuer did not match what the server advertises. */
  issuerReviewRequired?: boolean;
}

export class OAuthFlowError extends Error {
  readonly phase: OAuthPhase;
  readonly code: string;
  readonly httpStatus: number | undefined;
  readonly oauthError: string | undefined;
  readonly retryable: boolean;
  readonly issuerReviewRequired: boolean;

  constructor(phase: OAuthPhase, code: string, message: string, options: OAuthFlowErrorOptions = {}) {
    super(message);
    this.name = 'OAuthFlowError';
    this.phase = phase;
    this.code = code;
    this.httpStatus = options.httpStatus;
    this.oauthError = options.oauthError;
    this.retryable = options.retryable ?? false;
    this.issuerReviewRequired = options.issuerReviewRequired ?? false;
  }
}

/** A fetch-compatible function: the guarded outbound client's `fetch`, or the global one in unit tests. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Keeps a value from a remote server short and printable before it goes into a message. */
export function printable(value: unknown, max = 120): string {
  const text = typeof value === 'string' ? value : String(value);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/**
 * An authorization server's `error` value when it has the shape of an OAuth error code, else
 * undefined. Every registered code (RFC 6749, 7591, 8707, OpenID Connect, DPoP) is lower-case words
 * joined by underscores; the value is shown to administrators and logged, and a server may put
 * anything there, the client secret it was sent included, which a code's shape keeps out.
 */
export function oauthErrorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[a-z]+(?:_[a-z]+)*$/.test(value) && value.length <= 60 ? value : undefined;
}

/**
 * An OAuth endpoint's answer: its JSON body, read leniently (a body that is not JSON reads as
 * undefined), and its RFC 6749 section 5.2 `error` code (oauthErrorCode).
 */
export async function readOAuthAnswer(response: Response): Promise<{ json: unknown; oauthError: string | undefined }> {
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    json = undefined;
  }
  return { json, oauthError: oauthErrorCode((json as { error?: unknown } | null | undefined)?.error) };
}

/**
 * A request that did not get an answer: refused by the outbound policy (not retryable, the
 * operator must allow the network), timed out or failed on the network (retryable).
 */
export function requestFailure(phase: OAuthPhase, what: string, error: unknown): OAuthFlowError {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'OutboundBlockedError') {
    const reason = (error as { reason?: string }).reason;
    return new OAuthFlowError(
      phase,
      reason === 'redirect_blocked' ? 'redirect_blocked' : 'address_blocked',
      `${what}: refused by the outbound network policy`,
    );
  }
  if (name === 'OutboundTimeoutError')
    return new OAuthFlowError(phase, 'timeout', `${what}: no answer in time`, { retryable: true });
  if (name === 'OutboundResponseTooLargeError')
    return new OAuthFlowError(phase, 'response_too_large', `${what}: the response is too large`);
  return new OAuthFlowError(phase, 'unreachable', `${what}: ${printable((error as Error)?.message ?? error)}`, {
    retryable: true,
  });
}
