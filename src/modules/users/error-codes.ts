// The users module's error codes: accounts, sign-up, sign-in, re-authentication and the desktop app's sign-in.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const userErrors = defineErrorCodes({
  already_bootstrapped: { status: 409, description: 'The instance has an organization already: bootstrap runs once' },
  sign_up_disabled: { status: 403, description: 'Sign-up is turned off on this instance (SIGN_UP_ENABLED=false)' },
  email_taken: { status: 409, description: 'An account with this e-mail address exists' },
  invalid_credentials: {
    status: [401, 403],
    description: 'Wrong e-mail or password (401 at sign-in; 403 when a signed-in person re-authenticates)',
  },
  password_not_set: {
    status: 403,
    description: 'The account has no password (an SSO-only account): re-authenticate through SSO',
  },
  sso_required: {
    status: 403,
    description: "An organization the account is a member of requires SSO for the account's e-mail domain",
  },
  invalid_grant: {
    status: 400,
    description:
      'The sign-in code is unknown, expired or used, or the code verifier or redirect URI does not match its start',
  },
});
