/**
 * The `pool` section of the node's config: which templates keep prepared
 * restores (see `restore-pool.ts`) and between which watermarks.
 *
 * @module
 */
import { AenvError, field, type ResolvedConfig } from '@aenv/shared';

/** Schema of the `pool` section. */
export const restorePoolConfigSchema = {
  templates: field.list({
    default: ['base'],
    env: 'AENV_POOL_TEMPLATES',
    doc: 'Templates (id or alias) whose creates take a prepared restore: a VMM already started on the template snapshot, with a network slot and a disk, waiting. Empty: no pool.',
  }),
  low: field.integer({
    default: 1,
    min: 0,
    max: 64,
    env: 'AENV_POOL_LOW',
    doc: 'Refill a template pool when fewer prepared restores than this are ready or being prepared (0: no pool).',
  }),
  high: field.integer({
    default: 2,
    min: 0,
    max: 64,
    env: 'AENV_POOL_HIGH',
    doc: 'Refill up to this many per template; each holds a network slot, a disk export and a waiting VMM process.',
  }),
  checkSeconds: field.integer({
    default: 10,
    min: 1,
    max: 3600,
    env: 'AENV_POOL_CHECK_SECONDS',
    doc: 'How often the pool looks for rebuilt templates (also at each create that misses); prepared restores of an old snapshot are drained.',
  }),
};

/** The loaded `pool` section. */
export type RestorePoolConfig = ResolvedConfig<typeof restorePoolConfigSchema>;

/**
 * Checks what the schema cannot: `low` at most `high`.
 * @throws {AenvError} `CONFIG_INVALID_VALUE`.
 */
export function checkRestorePoolConfig(c: RestorePoolConfig): RestorePoolConfig {
  if (c.low > c.high) {
    throw new AenvError(
      'CONFIG_INVALID_VALUE',
      `pool.low (${c.low}) must not exceed pool.high (${c.high})`,
      { fields: { key: 'pool.low' } },
    );
  }
  return c;
}
