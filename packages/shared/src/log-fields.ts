/**
 * Log and event field names, defined once. Every structured log line and
 * diagnostics-channel event uses these keys, so logs from every package can
 * be joined on them.
 *
 * @module
 */

/** The fixed field names of structured logs. */
export const LOG_FIELDS = Object.freeze({
  /** Sandbox id. */
  sandboxId: 'sandbox.id',
  /** Template id or alias. */
  templateId: 'template.id',
  /** Snapshot id. */
  snapshotId: 'snapshot.id',
  /** Layer digest (`sha256:...`). */
  layerDigest: 'layer.digest',
  /** Network slot index. */
  slotId: 'slot.id',
  /** Drive name within a VM. */
  driveId: 'drive.id',
  /** Node id. */
  nodeId: 'node.id',
  /** The VMM process id. */
  vmPid: 'vm.pid',
  /** The VMM driver kind. */
  vmmDriver: 'vmm.driver',
  /** The operation (create, pause, ...). */
  op: 'op',
  /** Operation stage within `op`. */
  stage: 'stage',
  /** Duration in milliseconds. */
  durationMs: 'duration_ms',
  /** Stable error code. */
  errorCode: 'error.code',
  /** Error message. */
  errorMessage: 'error.message',
  /** HTTP method. */
  httpMethod: 'http.method',
  /** HTTP route or path. */
  httpPath: 'http.path',
  /** HTTP status. */
  httpStatus: 'http.status',
  /** A byte count (fetched, written, sealed). */
  bytes: 'bytes',
  /** Index of a data chunk within a layer. */
  chunkIndex: 'chunk.index',
});

/** One of the {@link LOG_FIELDS} values. */
export type LogField = (typeof LOG_FIELDS)[keyof typeof LOG_FIELDS];
