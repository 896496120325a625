/**
 * The per-VM user ids of jailed VMMs: `base + 1 .. base + count`, each held
 * by at most one running VMM and handed back when it has ended.
 *
 * Layout: gid `base` is the common `aenv-vmm` group every jailed VMM has as
 * its one supplementary group (snapshot memory files are `root:<base>
 * 0440`, so a clone running as any other jail uid can map them); VM `i`
 * runs as uid = gid = `base + 1 + i`, a group nobody else is in. The lowest
 * free index is reused first, so ids stay in a small, predictable range.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Who one jailed VMM runs as. */
export interface JailIdentity {
  readonly uid: number;
  readonly gid: number;
  /** Supplementary groups: the common group that may read snapshot memory. */
  readonly groups: readonly number[];
}

/** The largest id Linux allows (2^32 - 2). */
const MAX_ID = 4_294_967_294;

/** See the module comment. */
export class JailUidPool {
  readonly base: number;
  readonly count: number;
  readonly #used = new Set<number>();

  /** @throws {AenvError} `INVALID_ARGUMENT` for a range that includes root or overflows. */
  constructor(base: number, count: number) {
    if (!Number.isInteger(base) || !Number.isInteger(count) || base < 1 || count < 1) {
      throw new AenvError('INVALID_ARGUMENT', `jail uid range ${base}+${count} is invalid`);
    }
    if (base + count > MAX_ID) {
      throw new AenvError('INVALID_ARGUMENT', `jail uid range ${base}+${count} exceeds ${MAX_ID}`);
    }
    this.base = base;
    this.count = count;
  }

  /** The common group of every jailed VMM. */
  get sharedGid(): number {
    return this.base;
  }

  /** How many identities are held. */
  get inUse(): number {
    return this.#used.size;
  }

  /**
   * Takes the lowest free identity.
   * @throws {AenvError} `VMM_JAIL_EXHAUSTED` when all `count` are held.
   */
  acquire(): JailIdentity {
    for (let i = 0; i < this.count; i++) {
      if (this.#used.has(i)) continue;
      this.#used.add(i);
      const id = this.base + 1 + i;
      return { uid: id, gid: id, groups: [this.base] };
    }
    throw new AenvError(
      'VMM_JAIL_EXHAUSTED',
      `all ${this.count} jail uids (${this.base + 1}..${this.base + this.count}) are in use`,
      { fields: { count: this.count } },
    );
  }

  /** Hands `identity` back (idempotent). */
  release(identity: JailIdentity): void {
    this.#used.delete(identity.uid - this.base - 1);
  }
}
