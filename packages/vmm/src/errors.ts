/**
 * Error constructors of the vmm package, so that every driver words the
 * same conditions the same way (codes are registered in
 * `@aenv/shared` error-codes, section vmm).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { VmmDriverKind } from './driver.js';

/**
 * The typed error for an operation or feature a driver does not have.
 * @param driver the driver that refuses
 * @param operation what was asked, e.g. `snapshot({ after: 'pause' })`
 * @param why one clause saying why, for the message
 */
export function notSupported(driver: VmmDriverKind, operation: string, why?: string): AenvError {
  const reason = why === undefined ? '' : `: ${why}`;
  return new AenvError(
    'VMM_NOT_SUPPORTED',
    `the ${driver} driver does not support ${operation}${reason}`,
    { fields: { 'vmm.driver': driver, op: operation } },
  );
}

/** The error for a spec field that is malformed. */
export function invalidSpec(field: string, message: string): AenvError {
  return new AenvError('INVALID_ARGUMENT', `invalid VM spec: ${field} ${message}`, {
    fields: { field },
  });
}
