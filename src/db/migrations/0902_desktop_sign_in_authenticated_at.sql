-- A desktop sign-in code carries when the browser session that asked for it last authenticated: the
-- app's session inherits that time instead of starting fresh, so authorizing and redeeming codes one
-- after another cannot keep an authentication fresh (only signing in or re-authenticating does).
-- A code lives a minute: those in flight as this runs are dropped (the app asks again) rather than
-- given a time nobody authenticated at.
DELETE FROM desktop_sign_in_codes;
ALTER TABLE desktop_sign_in_codes ADD COLUMN authenticated_at timestamptz NOT NULL;
