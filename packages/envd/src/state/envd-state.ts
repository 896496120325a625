/**
 * What `/init` configures and every request reads: the access token, the
 * global environment variables of every process, and the default user and
 * working directory.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import { AenvError } from '@aenv/shared';
import type { UserDb, UserInfo } from '../users/user-db.js';

/** Compares two secrets in constant time (for equal lengths). */
export function secretEquals(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The mutable, /init-controlled state of one envd. */
export class EnvdState {
  /** Global environment of every process, in insertion order. */
  readonly envVars = new Map<string, string>();
  /** When set, requests must carry it (`X-Access-Token`) or a URL signature. */
  accessToken: string | undefined;
  /** The user of requests that name none; falls back to `user`, then `root`. */
  defaultUser: string | undefined;
  /** The working directory of processes and the meaning of an empty path. */
  defaultWorkdir: string | undefined;

  readonly users: UserDb;

  constructor(users: UserDb) {
    this.users = users;
  }

  /** Whether `token` is the access token (true when none is set). */
  tokenMatches(token: string | null | undefined): boolean {
    if (this.accessToken === undefined) return true;
    return typeof token === 'string' && secretEquals(token, this.accessToken);
  }

  /**
   * The account a request runs as: the one it names, else the default.
   * @throws {AenvError} `ENVD_USER_UNKNOWN` when the account does not exist.
   */
  resolveUser(name: string | undefined): UserInfo {
    const wanted =
      name !== undefined && name !== ''
        ? name
        : (this.defaultUser ?? (this.users.byName('user') !== undefined ? 'user' : 'root'));
    const user = this.users.byName(wanted);
    if (user === undefined) {
      throw new AenvError('ENVD_USER_UNKNOWN', `invalid username: '${wanted}'`, {
        fields: { user: wanted },
      });
    }
    return user;
  }
}

/** The user name of an `Authorization: Basic base64("<user>:")` header. */
export function basicAuthUser(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? decoded : decoded.slice(0, colon);
}
