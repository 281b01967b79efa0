// The authorization response (RFC 6749 §4.1.2) as it reaches a callback, checked after the
// state: the issuer (RFC 9207) and then either an error or a code.

import { OAuthFlowError, oauthErrorCode } from './errors.ts';
import { sameIssuer } from './metadata-fetch.ts';

export interface CallbackQuery {
  code?: string;
  state?: string;
  iss?: string;
  error?: string;
  error_description?: string;
}

/**
 * RFC 9207 §2.4: when the response carries `iss` it must be the issuer the request went to;
 * when the server advertises `authorization_response_iss_parameter_supported`, `iss` must be
 * there. This is what stops a mix-up between two authorization servers.
 */
export function checkResponseIssuer(
  query: CallbackQuery,
  expectedIssuer: string,
  issParameterSupported: boolean,
): void {
  if (query.iss !== undefined) {
    if (!sameIssuer(query.iss, expectedIssuer)) {
      throw new OAuthFlowError(
        'AUTH_USER_OR_WORKLOAD',
        'issuer_mismatch',
        'The authorization response came from another issuer',
      );
    }
    return;
  }
  if (issParameterSupported) {
    throw new OAuthFlowError(
      'AUTH_USER_OR_WORKLOAD',
      'issuer_missing',
      'The authorization response lacks the iss parameter its server promises',
    );
  }
}

/** The code, or the refusal the authorization server sent back. */
export function authorizationCodeFrom(query: CallbackQuery): string {
  if (query.error !== undefined) {
    const code = oauthErrorCode(query.error);
    throw new OAuthFlowError(
      'AUTH_USER_OR_WORKLOAD',
      'authorization_refused',
      `The authorization server answered ${code ?? 'with an error that is no OAuth error code'}`,
      {
        oauthError: code,
      },
    );
  }
  if (!query.code)
    throw new OAuthFlowError('AUTH_USER_OR_WORKLOAD', 'code_missing', 'The authorization response carries no code');
  return query.code;
}
