-- When orgplane itself verified that the account's holder receives mail at its e-mail address (null:
-- never). SSO sign-in takes an existing account as the identity provider's person only when something
-- ties it to the organization or this is set: a password sign-up proves nothing about the address.
-- Nothing sets it yet: orgplane sends no mail, so it verifies no address today (see docs/api/README.md,
-- "Which account an SSO sign-in takes").
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
