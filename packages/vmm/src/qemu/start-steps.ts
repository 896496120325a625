/**
 * The last steps of starting a qemu VM (`cont` after boot, loading device
 * state and `cont` after a restore), run the same way for every start: on
 * failure or abort the VM is killed (its run-directory files go with it)
 * and the error is wrapped with QEMU's last words; on success the VM moves
 * from `starting` to `running`.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { QemuInstance } from './qemu-instance.js';
import type { QemuVm } from './qemu-vm.js';

/**
 * Runs `steps` against a started instance.
 * @throws {AenvError} `code` wrapping the failure; the abort reason as it is.
 */
export async function finishStart(
  vm: QemuVm,
  instance: QemuInstance,
  signal: AbortSignal | undefined,
  code: 'VMM_START_FAILED' | 'VMM_RESTORE_FAILED',
  steps: (inst: QemuInstance) => Promise<void>,
): Promise<void> {
  try {
    signal?.throwIfAborted();
    await steps(instance);
    signal?.throwIfAborted();
    vm.markStarted();
  } catch (err) {
    await vm.stop({ graceMs: 0 });
    if (signal?.aborted === true) throw err;
    throw startFailure(vm.id, instance, code, err);
  }
}

/** The wrapped error of a failed start step, with the end of QEMU's stderr. */
export function startFailure(
  id: string,
  instance: QemuInstance,
  code: 'VMM_START_FAILED' | 'VMM_RESTORE_FAILED',
  err: unknown,
): AenvError {
  const died = instance.process.stderrTail().trim();
  return new AenvError(
    code,
    `VM ${id}: ${(err as Error).message}${died === '' ? '' : ` (QEMU: ${died})`}`,
    { cause: err, fields: { 'sandbox.id': id } },
  );
}
