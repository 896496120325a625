/**
 * Signed file URLs (`uploadUrl`/`downloadUrl` of the SDKs) and the access
 * rule of `/files`: with an access token set, a request needs either the
 * token in `X-Access-Token` or a valid `v1_` signature.
 *
 * Signature (shared/reference/e2b-protocol.md §3.7):
 * `"v1_" + base64(sha256("<path>:<read|write>:<user>:<token>[:<expiry>]"))`
 * without padding, over the path and user exactly as given in the query.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { AenvError } from '@aenv/shared';
import { secretEquals, type EnvdState } from '../state/envd-state.js';

/** What a signature grants. */
export type FileOperation = 'read' | 'write';

/** The `v1_` signature of a file URL. */
export function fileSignature(
  path: string,
  operation: FileOperation,
  user: string,
  token: string,
  expiration?: number,
): string {
  const raw = [
    path,
    operation,
    user,
    token,
    ...(expiration === undefined ? [] : [String(expiration)]),
  ].join(':');
  return `v1_${createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Checks that a `/files` request may proceed.
 * @throws {AenvError} `ENVD_TOKEN_INVALID`, `ENVD_SIGNATURE_INVALID`, `ENVD_SIGNATURE_EXPIRED`.
 */
export function authorizeFileRequest(
  state: EnvdState,
  tokenHeader: string | undefined,
  query: URLSearchParams,
  operation: FileOperation,
  now = Date.now(),
): void {
  const token = state.accessToken;
  if (token === undefined) return;
  if (tokenHeader !== undefined && tokenHeader !== '') {
    if (secretEquals(tokenHeader, token)) return;
    throw new AenvError('ENVD_TOKEN_INVALID', 'access token present in header but does not match');
  }
  const signature = query.get('signature');
  if (signature === null)
    throw new AenvError('ENVD_SIGNATURE_INVALID', 'missing signature query parameter');
  const rawExpiration = query.get('signature_expiration');
  if (rawExpiration !== null && !/^-?\d+$/.test(rawExpiration)) {
    throw new AenvError('ENVD_SIGNATURE_INVALID', 'invalid signature_expiration');
  }
  const expiration = rawExpiration === null ? undefined : Number(rawExpiration);
  const expected = fileSignature(
    query.get('path') ?? '',
    operation,
    query.get('username') ?? '',
    token,
    expiration,
  );
  if (!secretEquals(signature, expected))
    throw new AenvError('ENVD_SIGNATURE_INVALID', 'invalid signature');
  if (expiration !== undefined && expiration < Math.floor(now / 1000)) {
    throw new AenvError('ENVD_SIGNATURE_EXPIRED', 'signature is already expired');
  }
}
