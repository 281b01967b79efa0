-- How an OIDC connection trusts the e-mail address its identity provider asserts: verified_claim (the
-- provider's email_verified must be true) or verified_domain (an address in the organization's verified
-- domain stands as verified, for providers that never send email_verified, such as Microsoft Entra ID).
-- Existing connections keep what they did: verified_claim.
ALTER TABLE sso_connections ADD COLUMN email_trust text NOT NULL DEFAULT 'verified_claim' CHECK (email_trust IN ('verified_claim', 'verified_domain'));
