/**
 * API keys of the node. On first start one key is generated (`e2b_` + 40
 * hex, the shape the e2b SDKs accept) and stored in `$AENV_HOME/api-key`
 * with mode 0600; every route but the public ones requires it as
 * `X-API-Key`. Comparison is constant-time. (Tenants and hashed key storage
 * come with the security work.)
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AenvError, newApiKey } from '@aenv/shared';

/** Checks API keys. */
export class ApiKeys {
  readonly #digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map(digest);
  }

  /**
   * Loads the key file, creating it with a new key when absent.
   * @returns the store and the key (so the daemon can print where it is).
   */
  static loadOrCreate(path: string): { keys: ApiKeys; key: string; created: boolean } {
    try {
      const key = readFileSync(path, 'utf8').trim();
      if (key !== '') return { keys: new ApiKeys([key]), key, created: false };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const key = newApiKey();
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'w' });
    chmodSync(path, 0o600);
    return { keys: new ApiKeys([key]), key, created: true };
  }

  /**
   * Checks the `X-API-Key` header.
   * @throws {AenvError} `API_UNAUTHENTICATED`.
   */
  check(header: string | string[] | undefined): void {
    const given = Array.isArray(header) ? header[0] : header;
    if (given === undefined || given === '') {
      throw new AenvError('API_UNAUTHENTICATED', 'missing API key: send it as X-API-Key');
    }
    const d = digest(given);
    if (!this.#digests.some((k) => timingSafeEqual(k, d))) {
      throw new AenvError('API_UNAUTHENTICATED', 'invalid API key');
    }
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
