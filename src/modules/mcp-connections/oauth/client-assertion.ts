// private_key_jwt client authentication (RFC 7523 §2.2, OpenID Connect Core §9): the client proves
// itself with a JWT it signs, so no secret ever travels. Signed with node:crypto: the JWS algorithms
// below are the ones a PKCS#8 key of each type can make, and nothing here needs a JOSE library.
import { constants, createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from '../contracts.ts';

/** How long an assertion is good for: long enough for clock skew, too short to be worth replaying. */
const ASSERTION_LIFETIME_SECONDS = 60;

const ecCurves: Partial<Record<SigningAlgorithm, string>> = {
  ES256: 'prime256v1',
  ES384: 'secp384r1',
  ES512: 'secp521r1',
};

function readKey(pem: string): KeyObject | null {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    return key.type === 'private' ? key : null;
  } catch {
    return null;
  }
}

/** The algorithm a key signs with when none is configured: RS256 for RSA, the curve's ES* for EC, EdDSA for Ed25519. */
function defaultAlgorithm(key: KeyObject): SigningAlgorithm | null {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'rsa-pss':
      return 'PS256';
    case 'ec':
      return (
        (Object.entries(ecCurves).find(([, curve]) => curve === key.asymmetricKeyDetails?.namedCurve)?.[0] as
          | SigningAlgorithm
          | undefined) ?? null
      );
    case 'ed25519':
      return 'EdDSA';
    default:
      return null;
  }
}

function keyFits(key: KeyObject, algorithm: SigningAlgorithm): boolean {
  if (algorithm.startsWith('RS')) return key.asymmetricKeyType === 'rsa';
  if (algorithm.startsWith('PS')) return key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss';
  if (algorithm === 'EdDSA') return key.asymmetricKeyType === 'ed25519';
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === ecCurves[algorithm];
}

/**
 * The algorithm this key signs with (`requested`, or the key's default), or why it cannot sign: the
 * text is a validation message (it never quotes the key).
 */
export function signingAlgorithmFor(
  pem: string,
  requested?: SigningAlgorithm | null,
): { algorithm: SigningAlgorithm } | { problem: string } {
  const key = readKey(pem);
  if (!key) return { problem: 'Must be an unencrypted private key in PEM (PKCS#8, PKCS#1 or SEC 1)' };
  const algorithm = requested ?? defaultAlgorithm(key);
  if (!algorithm)
    return {
      problem: `No signing algorithm is known for a ${key.asymmetricKeyType} key: use an RSA, EC (P-256, P-384, P-521) or Ed25519 key`,
    };
  if (!keyFits(key, algorithm)) return { problem: `A ${key.asymmetricKeyType} key cannot sign ${algorithm}` };
  return { algorithm };
}

function base64url(value: Buffer | string): string {
  return Buffer.from(value).toString('base64url');
}

/**
 * The client assertion: iss and sub the client id, aud the authorization server's issuer (RFC 7523
 * §3 allows the issuer or the token endpoint; the issuer is what every server accepts, and what the
 * MCP client-credentials extension names), a short expiry and a unique jti against replay.
 */
export function signClientAssertion(options: {
  clientId: string;
  audience: string;
  privateKeyPem: string;
  algorithm: SigningAlgorithm;
  now?: Date;
}): string {
  const key = readKey(options.privateKeyPem);
  if (!key || !keyFits(key, options.algorithm))
    throw new Error('the configured private key cannot sign the client assertion');
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const header = { alg: options.algorithm, typ: 'JWT' };
  const claims = {
    iss: options.clientId,
    sub: options.clientId,
    aud: options.audience,
    iat: issuedAt,
    exp: issuedAt + ASSERTION_LIFETIME_SECONDS,
    jti: randomUUID(),
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const digest = options.algorithm === 'EdDSA' ? null : `sha${options.algorithm.slice(2)}`;
  const signature = options.algorithm.startsWith('PS')
    ? sign(digest, Buffer.from(input), {
        key,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: Number(options.algorithm.slice(2)) / 8,
      })
    : options.algorithm.startsWith('ES')
      ? sign(digest, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : sign(digest, Buffer.from(input), key);
  return `${input}.${base64url(signature)}`;
}
