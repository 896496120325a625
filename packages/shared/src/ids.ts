/**
 * Identifiers: sandbox, snapshot and template ids, API keys and tokens.
 *
 * Ids are lowercase base-36, 20 characters (E2B uses short ids of this
 * shape). They contain no `.` and no `-`, so `{port}-{id}.{domain}` host
 * names parse unambiguously. Randomness comes from `crypto`.
 *
 * @module
 */
import { randomBytes, randomInt } from 'node:crypto';
import { AenvError } from './aenv-error.js';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Length of generated ids. */
export const ID_LENGTH = 20;
const ID_PATTERN = /^[a-z0-9]{20}$/;
/** Names users give (templates, snapshots): start with a letter or digit; `.`-free. */
const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A new random id of {@link ID_LENGTH} base-36 characters. */
export function newId(): string {
  let out = '';
  for (let i = 0; i < ID_LENGTH; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** Whether a string has the shape of a generated id. */
export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** Whether a string is a valid user-given name (template alias, snapshot name). */
export function isName(value: string): boolean {
  return NAME_PATTERN.test(value);
}

/**
 * Checks a user-given name.
 * @throws {AenvError} `ID_INVALID` naming what was wrong.
 */
export function assertName(kind: string, value: string): void {
  if (!isName(value)) {
    throw new AenvError(
      'ID_INVALID',
      `invalid ${kind} name ${JSON.stringify(value)}: use 1-63 of a-z, 0-9, '_' and '-', starting with a letter or digit`,
      { fields: { kind, value } },
    );
  }
}

/** A new API key: `e2b_` + 40 hex characters (the shape the e2b SDKs accept). */
export function newApiKey(): string {
  return `e2b_${randomBytes(20).toString('hex')}`;
}

/** A new opaque secret token (envd access token, traffic token): 64 hex characters. */
export function newToken(): string {
  return randomBytes(32).toString('hex');
}
