-- The desktop app's sign-in through the console (RFC 8252: the app opens the console in the person's
-- browser with a loopback or `orgplane:` redirect and a PKCE challenge; the signed-in console hands the
-- app a one-time code, which the app alone can redeem for a session of its own). A code is found by
-- its hash, lives a minute and is redeemed once.
CREATE TABLE desktop_sign_in_codes (
  code_hash       text PRIMARY KEY,
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id text REFERENCES organizations (id) ON DELETE CASCADE,
  code_challenge  text NOT NULL,
  redirect_uri    text NOT NULL,
  -- How the browser's session last authenticated: the app's session says the same.
  auth_method     text NOT NULL CHECK (auth_method IN ('password', 'sso')),
  expires_at      timestamptz NOT NULL
);
CREATE INDEX desktop_sign_in_codes_expiry ON desktop_sign_in_codes (expires_at);
