import { decodeProtectedHeader, jwtVerify, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { AppError } from '../errors/app-error.js';
import type { IssuerKeys } from './issuer-keys.js';
import type { Role } from './permissions.js';
import { rolesFromClaims } from './roles-from-claims.js';

/** Asymmetric algorithms only: `none` and HS* (an HMAC keyed with a public key) are refused outright. */
const allowedAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** CONTRACT §5: `exp`/`nbf` are checked with this much clock skew allowed. */
export const clockToleranceSeconds = 30;

export interface VerifiedToken {
  claims: JWTPayload;
  subject: string;
  roles: Role[];
}

export interface TokenRules {
  /** OIDC_AUDIENCE: `aud` must contain it… */
  audience: string;
  /** …or `azp` must equal OIDC_CLIENT_ID. */
  clientId: string;
  /** Parsed OIDC_ROLES_CLAIM. */
  roleClaimPaths: readonly string[][];
}

/** Control characters, and surrogates not in a pair. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const unfitSubject = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** User ids the service gives its own built-in users; never accepted as a token's `sub`. */
export const reservedSubjects: ReadonlySet<string> = new Set(['local', 'anonymous']);

/** Why a token was refused, as the audit log records it and the 401's details say. */
export type RejectionReason =
  | 'missing'
  | 'malformed'
  | 'algorithm_not_allowed'
  | 'bad_signature'
  | 'unknown_key'
  | 'expired'
  | 'not_yet_valid'
  | 'no_expiry'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'no_subject'
  | 'reserved_subject'
  | 'not_an_access_token'
  | 'invalid_claims';

const explanations: Record<RejectionReason, string> = {
  missing: 'Authentication required: send Authorization: Bearer <access token>',
  malformed: 'The access token is not a well-formed JWT',
  algorithm_not_allowed: 'The access token is not signed with an accepted asymmetric algorithm',
  bad_signature: 'The access token signature does not verify',
  unknown_key: "The access token is signed with a key the identity provider does not publish",
  expired: 'The access token has expired',
  not_yet_valid: 'The access token is not valid yet',
  no_expiry: 'The access token has no expiry (exp)',
  wrong_issuer: 'The access token was issued by another issuer',
  wrong_audience: 'The access token is not meant for this service (aud/azp)',
  no_subject: 'The access token names no subject (sub)',
  reserved_subject: 'The access token names a subject this service reserves for its own users (local, anonymous)',
  not_an_access_token: 'The token is not an access token (an ID or refresh token was sent)',
  invalid_claims: 'The access token claims are invalid',
};

/** A 401 UNAUTHORIZED with its Bearer challenge (RFC 6750 §3: no error code when no token came). */
export function tokenRejected(reason: RejectionReason): AppError {
  const challenge = reason === 'missing' ? 'Bearer' : `Bearer error="invalid_token", error_description="${explanations[reason]}"`;
  return new AppError('UNAUTHORIZED', explanations[reason], { details: { reason }, headers: { 'WWW-Authenticate': challenge } });
}

/**
 * Checks a bearer token as CONTRACT §5 says: signature by one of the issuer's published keys,
 * `iss`, `aud`/`azp`, `exp` required, `exp`/`nbf` with 30 s tolerance, a subject. Throws the 401
 * for a bad token, or the keys' 503 when the identity provider cannot be reached.
 */
export async function verifyAccessToken(token: string, keys: IssuerKeys, rules: TokenRules): Promise<VerifiedToken> {
  // What can be judged without the identity provider is judged first, so a malformed or `alg:none`
  // token is a 401 even while the provider is unreachable.
  let algorithm: unknown;
  try {
    algorithm = decodeProtectedHeader(token).alg;
  } catch {
    throw tokenRejected('malformed');
  }
  if (typeof algorithm !== 'string' || !allowedAlgorithms.includes(algorithm)) throw tokenRejected('algorithm_not_allowed');
  let claims: JWTPayload;
  let header: JWTHeaderParameters;
  try {
    ({ payload: claims, protectedHeader: header } = await jwtVerify(token, keys.getKey, {
      issuer: await keys.issuer(),
      algorithms: allowedAlgorithms,
      clockTolerance: clockToleranceSeconds,
      requiredClaims: ['exp'],
    }));
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw tokenRejected(reasonFor(error));
  }
  if (!looksLikeAccessToken(header, claims)) throw tokenRejected('not_an_access_token');
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
  if (!audiences.includes(rules.audience) && claims.azp !== rules.clientId) throw tokenRejected('wrong_audience');
  if (typeof claims.sub !== 'string' || claims.sub.length === 0 || claims.sub.length > 255) throw tokenRejected('no_subject');
  // `local` owns everything made while AUTH_ENABLED=false and `anonymous` is who refused tokens
  // are audited as: an identity provider that lets a user pick such a name must not hand over
  // their data (issue 20).
  if (reservedSubjects.has(claims.sub)) throw tokenRejected('reserved_subject');
  // A user id is stored and logged: control characters (PostgreSQL's text cannot hold NUL) and
  // unpaired surrogates are no one's name.
  if (unfitSubject.test(claims.sub)) throw tokenRejected('invalid_claims');
  return { claims, subject: claims.sub, roles: rolesFromClaims(claims, rules.roleClaimPaths) };
}

/** Token types other than access tokens, as Keycloak names them in its `typ` claim. */
const otherTokenTypes = new Set(['id', 'refresh', 'logout']);
/** Header `typ` values of access tokens: RFC 9068's, and the plain JWT most providers write. */
const accessTokenHeaderTypes = new Set(['jwt', 'at+jwt', 'application/at+jwt']);

/**
 * An ID token issued to this client has `aud` = the client id, which the default audience
 * accepts; ID tokens travel in more places than access tokens (logout URLs, front-end storage),
 * so they must not open the API. RFC 9068 access tokens say `at+jwt`; Keycloak says `typ: "ID"`.
 */
function looksLikeAccessToken(header: JWTHeaderParameters, claims: JWTPayload): boolean {
  if (header.typ !== undefined && !accessTokenHeaderTypes.has(header.typ.toLowerCase())) return false;
  return typeof claims.typ !== 'string' || !otherTokenTypes.has(claims.typ.toLowerCase());
}

/** jose's error codes, sorted into the reasons a client and an auditor can act on. */
function reasonFor(error: unknown): RejectionReason {
  const { code, claim } = (typeof error === 'object' && error !== null ? error : {}) as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'algorithm_not_allowed';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'unknown_key';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'iss') return 'wrong_issuer';
      if (claim === 'nbf') return 'not_yet_valid';
      if (claim === 'exp') return 'no_expiry';
      return 'invalid_claims';
    default:
      return 'malformed';
  }
}
