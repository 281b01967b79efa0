-- One row per version of the secret key ring that has sealed anything here: an HMAC of a fixed text
-- under that key, never the key. Every process checks its ring against these rows when it starts, so
-- a process started with another key (say, one that generated its own DATA_DIR/secret.key next to a
-- shared DATABASE_URL) refuses to start instead of sealing secrets the others cannot open.

CREATE TABLE secret_key_checks (
  version text PRIMARY KEY,
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
