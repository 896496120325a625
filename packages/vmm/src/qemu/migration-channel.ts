/**
 * Moving a QEMU migration stream (the device state of a snapshot) between
 * QEMU and a file over a unix socket in the VM's run directory.
 *
 * Why sockets: QEMU runs under its own seccomp filter with `spawn=deny`,
 * which rules out `exec:` migration URIs, and QEMU 7.2 has no `file:` URI.
 * Node owns the file side, so QEMU never needs access to snapshot
 * directories. Outgoing: this process listens and QEMU connects
 * (`migrate unix:`); incoming: QEMU listens (`migrate-incoming unix:`) and
 * this process connects and writes the file.
 *
 * Contract: both functions resolve when QEMU reports the migration
 * `completed` AND the file side is done; the socket is removed either way.
 *
 * @module
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { chown, rm } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AenvError } from '@aenv/shared';
import type { QemuIdentity } from './qemu-args.js';
import type { QmpClient } from './qmp-client.js';

/** Name of the migration socket in the run directory. */
export const MIGRATION_SOCKET = 'mig.sock';

/** How long a device-state migration may take. */
export const MIGRATION_TIMEOUT_MS = 30_000;

/**
 * Sets migration capabilities, runs `start`, and waits for the MIGRATION
 * event to report completion.
 * @throws {AenvError} `VMM_QMP_ERROR` with QEMU's error text, `VMM_TIMEOUT`.
 */
export async function runMigration(
  qmp: QmpClient,
  timeoutMs: number,
  start: () => Promise<unknown>,
): Promise<void> {
  await qmp.execute('migrate-set-capabilities', {
    capabilities: [
      { capability: 'x-ignore-shared', state: true },
      { capability: 'events', state: true },
    ],
  });
  const done = qmp.waitForEvent(
    'MIGRATION',
    (e) =>
      e.data.status === 'completed' || e.data.status === 'failed' || e.data.status === 'cancelled',
    timeoutMs,
  );
  done.catch(() => undefined);
  await start();
  const event = await done;
  if (event.data.status !== 'completed') {
    const info = await qmp
      .execute<{ 'error-desc'?: string }>('query-migrate')
      .catch((): { 'error-desc'?: string } => ({}));
    throw new AenvError(
      'VMM_QMP_ERROR',
      `migration ${String(event.data.status)}: ${info['error-desc'] ?? 'no detail'}`,
    );
  }
}

/**
 * Saves the device state of a stopped QEMU into `file`.
 * @throws {AenvError} `VMM_QMP_ERROR`, `VMM_TIMEOUT`; file errors as they are.
 */
export async function saveDeviceState(
  qmp: QmpClient,
  runDir: string,
  file: string,
  qemuUser?: QemuIdentity,
): Promise<void> {
  const path = join(runDir, MIGRATION_SOCKET);
  await rm(path, { force: true });
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  try {
    if (qemuUser !== undefined) await chown(path, qemuUser.uid, qemuUser.gid);
    const written = new Promise<void>((resolve, reject) => {
      server.once('connection', (conn: Socket) => {
        pipeline(conn, createWriteStream(file, { flags: 'wx', mode: 0o640 })).then(resolve, reject);
      });
    });
    written.catch(() => undefined);
    await runMigration(qmp, MIGRATION_TIMEOUT_MS, () =>
      qmp.execute('migrate', { uri: `unix:${path}` }),
    );
    await written;
  } finally {
    server.close();
    await rm(path, { force: true });
  }
}

/**
 * Loads device state into a QEMU started with `-incoming defer`, from a file
 * or from the bytes of one (a prepared restore reads it ahead).
 * @throws {AenvError} `VMM_QMP_ERROR`, `VMM_TIMEOUT`; file errors as they are.
 */
export async function loadDeviceState(
  qmp: QmpClient,
  runDir: string,
  source: string | Buffer,
): Promise<void> {
  const path = join(runDir, MIGRATION_SOCKET);
  await rm(path, { force: true });
  try {
    await runMigration(qmp, MIGRATION_TIMEOUT_MS, async () => {
      await qmp.execute('migrate-incoming', { uri: `unix:${path}` });
      const conn = createConnection(path);
      await new Promise<void>((resolve, reject) => {
        conn.once('connect', resolve);
        conn.once('error', reject);
      });
      // Not awaited: QEMU may close the socket as soon as it has read the end
      // of the stream, before this side's end is flushed ("Premature close").
      // QEMU's MIGRATION event decides success; a send error (an unreadable
      // file) destroys the socket, so QEMU sees EOF and reports failure.
      const input = typeof source === 'string' ? createReadStream(source) : Readable.from([source]);
      pipeline(input, conn).catch(() => conn.destroy());
    });
  } finally {
    await rm(path, { force: true });
  }
}
