/**
 * Entry point of the NBD worker thread: an `NbdHost` driven by calls from
 * `NbdServer` over the worker's message port. All block I/O, cache fetches
 * and protocol parsing happen on this thread's event loop, so a busy disk
 * never delays the daemon's API on the main thread. Positional file I/O is
 * synchronous here by default (see `file-io.ts`): this thread has nothing
 * else to do, and it doubles small-request throughput.
 *
 * Diagnostics events published here are forwarded to the parent, which
 * re-publishes them on the same channels.
 *
 * @module
 */
import { subscribe } from 'node:diagnostics_channel';
import { parentPort, workerData } from 'node:worker_threads';
import { STORAGE_CHANNELS } from '../events.js';
import { useSyncIo } from '../file-io.js';
import { NbdHost } from './nbd-host.js';
import { serializeError, type CallMessage, type NbdCall, type WorkerMessage } from './nbd-rpc.js';

const port = parentPort;
if (port === null) throw new Error('nbd-worker.js must run in a worker thread');

const data = workerData as { socketDir: string; syncIo: boolean; keepCaches: boolean };
useSyncIo(data.syncIo);
const host = new NbdHost({ socketDir: data.socketDir, keepCaches: data.keepCaches });
const post = (m: WorkerMessage) => port.postMessage(m);

for (const name of Object.values(STORAGE_CHANNELS)) {
  subscribe(name, (payload) => post({ event: name, payload }));
}

async function run(call: NbdCall): Promise<unknown> {
  switch (call.op) {
    case 'addExport':
      return host.addExport(call.name, call.spec);
    case 'removeExport':
      return host.removeExport(call.name);
    case 'sealExport':
      return host.sealExport(call.name, call.options);
    case 'flushExport':
      return host.flushExport(call.name);
    case 'stats':
      return host.stats();
    case 'close':
      return host.close();
  }
}

port.on('message', (msg: CallMessage) => {
  run(msg.call).then(
    (value) => {
      post({ id: msg.id, ok: true, value });
      if (msg.call.op === 'close') port.close();
    },
    (err: unknown) => {
      post({ id: msg.id, ok: false, error: serializeError(err) });
      if (msg.call.op === 'close') port.close();
    },
  );
});
