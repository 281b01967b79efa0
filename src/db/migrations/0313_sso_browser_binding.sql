-- An SSO sign-in is bound to the browser that started it. POST /v1/auth/sso/start answers with orgplane's
-- own link, GET /v1/auth/sso/authorize?request=ID, whose ID is found by its hash (authorize_hash); the
-- first browser that opens it gets a cookie holding a random secret, whose SHA-256 is kept here
-- (browser_binding_hash, empty until then), and is sent on to the identity provider's URL (kept sealed:
-- it carries the state). The OIDC callback and the SAML ACS refuse any other browser before they use
-- what the provider sent. Sign-ins in progress when this runs have no link and are dropped (they live
-- ten minutes at most; their people start again).
DELETE FROM sso_sign_in_requests;
ALTER TABLE sso_sign_in_requests ADD COLUMN authorize_hash text NOT NULL;
ALTER TABLE sso_sign_in_requests ADD COLUMN authorization_url_sealed text NOT NULL;
ALTER TABLE sso_sign_in_requests ADD COLUMN browser_binding_hash text;
CREATE UNIQUE INDEX sso_sign_in_requests_authorize_idx ON sso_sign_in_requests (authorize_hash);

DELETE FROM sso_saml_requests;
ALTER TABLE sso_saml_requests ADD COLUMN authorize_hash text NOT NULL;
ALTER TABLE sso_saml_requests ADD COLUMN authorization_url_sealed text NOT NULL;
ALTER TABLE sso_saml_requests ADD COLUMN browser_binding_hash text;
CREATE UNIQUE INDEX sso_saml_requests_authorize_idx ON sso_saml_requests (authorize_hash);
