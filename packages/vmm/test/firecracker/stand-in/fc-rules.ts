/**
 * Firecracker's state rules, as the stand-in enforces them: which
 * operations are accepted before boot only, after boot only, or always,
 * and which pre-boot operations commit the process to the boot path (after
 * which `PUT /snapshot/load` is refused). Taken from Firecracker's API
 * controllers (`PrebootApiController` / `RuntimeApiController`), which is
 * where they are enforced; where the YAML's prose differs (it says
 * `PATCH /balloon` works before boot too) the controllers win.
 *
 * @module
 */

/** When an operation is accepted. */
export type Phase = 'pre' | 'post' | 'any';

/** Phase of every operation (actions are split by `action_type`). */
export const OPERATION_PHASE: Readonly<Record<string, Phase>> = {
  describeInstance: 'any',
  describeBalloonConfig: 'any',
  getExportVmConfig: 'any',
  getMachineConfiguration: 'any',
  getFirecrackerVersion: 'any',
  getMmds: 'any',
  putMmds: 'any',
  patchMmds: 'any',
  putGuestBootSource: 'pre',
  putLogger: 'pre',
  putMetrics: 'pre',
  putSerialDevice: 'pre',
  putGuestDriveByID: 'pre',
  putGuestPmemByID: 'pre',
  putGuestNetworkInterfaceByID: 'pre',
  loadSnapshot: 'pre',
  putCpuConfiguration: 'pre',
  putBalloon: 'pre',
  putGuestVsock: 'pre',
  putMmdsConfig: 'pre',
  putEntropyDevice: 'pre',
  putMemoryHotplug: 'pre',
  putMachineConfiguration: 'pre',
  patchMachineConfiguration: 'pre',
  createSnapshot: 'post',
  patchVm: 'post',
  describeBalloonStats: 'post',
  patchBalloon: 'post',
  patchBalloonStatsInterval: 'post',
  startBalloonHinting: 'post',
  describeBalloonHinting: 'post',
  stopBalloonHinting: 'post',
  patchGuestDriveByID: 'post',
  patchGuestNetworkInterfaceByID: 'post',
  patchGuestPmemByID: 'post',
  getMemoryHotplug: 'post',
  patchMemoryHotplug: 'post',
};

/** Phase of each `PUT /actions` action type. */
export const ACTION_PHASE: Readonly<Record<string, Phase>> = {
  InstanceStart: 'pre',
  FlushMetrics: 'post',
  SendCtrlAltDel: 'post',
};

/** Pre-boot operations after which a snapshot can no longer be loaded. */
export const BOOT_PATH_OPERATIONS: ReadonlySet<string> = new Set([
  'putGuestBootSource',
  'putGuestDriveByID',
  'putGuestPmemByID',
  'putGuestNetworkInterfaceByID',
  'putBalloon',
  'putGuestVsock',
  'putMmdsConfig',
  'putEntropyDevice',
  'putMemoryHotplug',
  'putMachineConfiguration',
  'patchMachineConfiguration',
]);

/** Firecracker's fault messages for an operation in the wrong phase. */
export const PHASE_FAULT = {
  pre: 'The requested operation is not supported after starting the microVM.',
  post: 'The requested operation is not supported before starting the microVM.',
} as const;

/**
 * The fault for `operationId` (with `actionType` for actions) in a VMM that
 * has or has not started, or undefined when it is accepted.
 */
export function phaseFault(
  operationId: string,
  started: boolean,
  actionType?: string,
): string | undefined {
  const phase =
    operationId === 'createSyncAction'
      ? (ACTION_PHASE[actionType ?? ''] ?? 'any')
      : (OPERATION_PHASE[operationId] ?? 'any');
  if (phase === 'pre' && started) return PHASE_FAULT.pre;
  if (phase === 'post' && !started) return PHASE_FAULT.post;
  return undefined;
}
