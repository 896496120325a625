/**
 * Firecracker's REST API over its unix socket, private to the firecracker
 * driver (style R2). One method per operation of the v1.16 spec, named
 * after its `operationId`; {@link FIRECRACKER_OPERATIONS} is the table they
 * share, which a test checks against the spec.
 *
 * Contract:
 * - every request is JSON over HTTP/1.1 on a fresh connection to the API
 *   socket (Firecracker serves one request at a time; nothing is gained by
 *   pooling) and has a timeout (`VMM_TIMEOUT`);
 * - a 2xx answer resolves with the parsed body (undefined for 204);
 *   anything else rejects with `VMM_API_ERROR` carrying Firecracker's
 *   `fault_message`, the method, path and status;
 * - a connection that fails or closes early rejects with `VMM_API_ERROR`
 *   (the VMM died or is not listening); the owner may translate it.
 *
 * @module
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import type {
  ActionType,
  Balloon,
  BalloonHintingStatus,
  BalloonStats,
  BootSource,
  CpuConfig,
  Drive,
  EntropyDevice,
  FullVmConfiguration,
  InstanceInfo,
  Logger,
  MachineConfiguration,
  MemoryHotplugConfig,
  MemoryHotplugStatus,
  Metrics,
  MmdsConfig,
  NetworkInterface,
  PartialDrive,
  PartialNetworkInterface,
  PartialPmem,
  Pmem,
  SerialDevice,
  SnapshotCreateParams,
  SnapshotLoadParams,
  Vsock,
} from './api-types.js';

/** HTTP methods the API uses. */
export type ApiMethod = 'GET' | 'PUT' | 'PATCH';

/** Every operation of the spec: operationId → method and path template. */
export const FIRECRACKER_OPERATIONS = {
  describeInstance: ['GET', '/'],
  createSyncAction: ['PUT', '/actions'],
  describeBalloonConfig: ['GET', '/balloon'],
  putBalloon: ['PUT', '/balloon'],
  patchBalloon: ['PATCH', '/balloon'],
  describeBalloonStats: ['GET', '/balloon/statistics'],
  patchBalloonStatsInterval: ['PATCH', '/balloon/statistics'],
  startBalloonHinting: ['PATCH', '/balloon/hinting/start'],
  describeBalloonHinting: ['GET', '/balloon/hinting/status'],
  stopBalloonHinting: ['PATCH', '/balloon/hinting/stop'],
  putGuestBootSource: ['PUT', '/boot-source'],
  putCpuConfiguration: ['PUT', '/cpu-config'],
  putGuestDriveByID: ['PUT', '/drives/{drive_id}'],
  patchGuestDriveByID: ['PATCH', '/drives/{drive_id}'],
  putGuestPmemByID: ['PUT', '/pmem/{id}'],
  patchGuestPmemByID: ['PATCH', '/pmem/{id}'],
  putLogger: ['PUT', '/logger'],
  getMachineConfiguration: ['GET', '/machine-config'],
  putMachineConfiguration: ['PUT', '/machine-config'],
  patchMachineConfiguration: ['PATCH', '/machine-config'],
  putMetrics: ['PUT', '/metrics'],
  putMmds: ['PUT', '/mmds'],
  patchMmds: ['PATCH', '/mmds'],
  getMmds: ['GET', '/mmds'],
  putMmdsConfig: ['PUT', '/mmds/config'],
  putEntropyDevice: ['PUT', '/entropy'],
  putSerialDevice: ['PUT', '/serial'],
  putMemoryHotplug: ['PUT', '/hotplug/memory'],
  patchMemoryHotplug: ['PATCH', '/hotplug/memory'],
  getMemoryHotplug: ['GET', '/hotplug/memory'],
  putGuestNetworkInterfaceByID: ['PUT', '/network-interfaces/{iface_id}'],
  patchGuestNetworkInterfaceByID: ['PATCH', '/network-interfaces/{iface_id}'],
  createSnapshot: ['PUT', '/snapshot/create'],
  loadSnapshot: ['PUT', '/snapshot/load'],
  getFirecrackerVersion: ['GET', '/version'],
  patchVm: ['PATCH', '/vm'],
  getExportVmConfig: ['GET', '/vm/config'],
  putGuestVsock: ['PUT', '/vsock'],
} as const satisfies Record<string, readonly [ApiMethod, string]>;

/** One operation id. */
export type OperationId = keyof typeof FIRECRACKER_OPERATIONS;

/** Default per-request timeout. */
export const DEFAULT_API_TIMEOUT_MS = 10_000;

/** Options of {@link FirecrackerApiClient.connect}. */
export interface ApiConnectOptions {
  /** Give up after this long. @default 10 000 */
  readonly timeoutMs?: number;
  /** Called between attempts; a returned string aborts with `VMM_START_FAILED` and that reason. */
  readonly abortIf?: () => string | undefined;
  readonly signal?: AbortSignal;
  /** Timeout of each later request. @default {@link DEFAULT_API_TIMEOUT_MS} */
  readonly requestTimeoutMs?: number;
}

interface Answer {
  readonly status: number;
  readonly text: string;
}

function apiError(method: string, path: string, why: string, extra: object = {}): AenvError {
  return new AenvError('VMM_API_ERROR', `firecracker API ${method} ${path}: ${why}`, {
    fields: { method, path, ...extra },
  });
}

function faultOf(text: string): string {
  try {
    const body = JSON.parse(text) as { fault_message?: unknown };
    if (typeof body.fault_message === 'string') return body.fault_message;
  } catch {
    // not JSON: use the raw text
  }
  return text.trim() === '' ? 'no fault message' : text.trim().slice(0, 2000);
}

/** See the module comment. */
export class FirecrackerApiClient {
  readonly socketPath: string;
  readonly #timeoutMs: number;

  constructor(socketPath: string, timeoutMs = DEFAULT_API_TIMEOUT_MS) {
    this.socketPath = socketPath;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Waits until the API socket answers `GET /` (Firecracker creates the
   * socket a few ms after it starts), then returns a client.
   * @throws {AenvError} `VMM_TIMEOUT`; `VMM_START_FAILED` via `abortIf`.
   */
  static async connect(
    socketPath: string,
    options: ApiConnectOptions = {},
  ): Promise<FirecrackerApiClient> {
    const client = new FirecrackerApiClient(socketPath, options.requestTimeoutMs);
    const deadline = performance.now() + (options.timeoutMs ?? 10_000);
    let last = 'no attempt';
    for (;;) {
      options.signal?.throwIfAborted();
      const reason = options.abortIf?.();
      if (reason !== undefined) {
        throw new AenvError('VMM_START_FAILED', `firecracker API ${socketPath}: ${reason}`, {
          fields: { path: socketPath },
        });
      }
      try {
        await client.describeInstance();
        return client;
      } catch (err) {
        last = (err as Error).message;
      }
      if (performance.now() > deadline) {
        throw new AenvError(
          'VMM_TIMEOUT',
          `firecracker API ${socketPath} did not answer: ${last}`,
          {
            fields: { path: socketPath },
          },
        );
      }
      await sleep(5);
    }
  }

  /**
   * Sends one request.
   * @throws {AenvError} `VMM_API_ERROR`, `VMM_TIMEOUT`.
   */
  async call<T>(
    op: OperationId,
    params: { readonly path?: Record<string, string>; readonly body?: unknown } = {},
    timeoutMs = this.#timeoutMs,
  ): Promise<T> {
    const [method, template] = FIRECRACKER_OPERATIONS[op];
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params.path?.[name];
      if (value === undefined) throw new AenvError('INTERNAL', `${op}: missing path ${name}`);
      return encodeURIComponent(value);
    });
    const answer = await this.#send(method, path, params.body, timeoutMs);
    if (answer.status < 200 || answer.status > 299) {
      throw apiError(method, path, `${answer.status} ${faultOf(answer.text)}`, {
        status: answer.status,
      });
    }
    if (answer.text === '') return undefined as T;
    try {
      return JSON.parse(answer.text) as T;
    } catch (err) {
      throw new AenvError(
        'VMM_API_ERROR',
        `firecracker API ${method} ${path}: answer is not JSON`,
        {
          cause: err,
          fields: { method, path },
        },
      );
    }
  }

  #send(method: ApiMethod, path: string, body: unknown, timeoutMs: number): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<Answer>((resolve, reject) => {
      const req = request({
        socketPath: this.socketPath,
        method,
        path,
        agent: false,
        headers: {
          Accept: 'application/json',
          ...(payload === undefined
            ? {}
            : { 'Content-Type': 'application/json', 'Content-Length': payload.length }),
        },
      });
      const timer = setTimeout(() => {
        req.destroy();
        reject(
          new AenvError(
            'VMM_TIMEOUT',
            `firecracker API ${method} ${path}: no answer in ${timeoutMs} ms`,
            {
              fields: { method, path },
            },
          ),
        );
      }, timeoutMs);
      req.once('error', (err) => {
        clearTimeout(timer);
        reject(Object.assign(apiError(method, path, err.message), { cause: err }));
      });
      req.once('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', (err) => {
          clearTimeout(timer);
          reject(apiError(method, path, err.message));
        });
        res.once('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.end(payload);
    });
  }

  // ---- one method per operation (names are the spec's operationIds) ----

  describeInstance(): Promise<InstanceInfo> {
    return this.call('describeInstance');
  }
  createSyncAction(action_type: ActionType): Promise<void> {
    return this.call('createSyncAction', { body: { action_type } });
  }
  describeBalloonConfig(): Promise<Balloon> {
    return this.call('describeBalloonConfig');
  }
  putBalloon(body: Balloon): Promise<void> {
    return this.call('putBalloon', { body });
  }
  patchBalloon(amount_mib: number): Promise<void> {
    return this.call('patchBalloon', { body: { amount_mib } });
  }
  describeBalloonStats(): Promise<BalloonStats> {
    return this.call('describeBalloonStats');
  }
  patchBalloonStatsInterval(stats_polling_interval_s: number): Promise<void> {
    return this.call('patchBalloonStatsInterval', { body: { stats_polling_interval_s } });
  }
  startBalloonHinting(acknowledge_on_stop?: boolean): Promise<void> {
    const body = acknowledge_on_stop === undefined ? undefined : { acknowledge_on_stop };
    return this.call('startBalloonHinting', { body });
  }
  describeBalloonHinting(): Promise<BalloonHintingStatus> {
    return this.call('describeBalloonHinting');
  }
  stopBalloonHinting(): Promise<void> {
    return this.call('stopBalloonHinting');
  }
  putGuestBootSource(body: BootSource): Promise<void> {
    return this.call('putGuestBootSource', { body });
  }
  putCpuConfiguration(body: CpuConfig): Promise<void> {
    return this.call('putCpuConfiguration', { body });
  }
  putGuestDriveByID(body: Drive): Promise<void> {
    return this.call('putGuestDriveByID', { path: { drive_id: body.drive_id }, body });
  }
  patchGuestDriveByID(body: PartialDrive): Promise<void> {
    return this.call('patchGuestDriveByID', { path: { drive_id: body.drive_id }, body });
  }
  putGuestPmemByID(body: Pmem): Promise<void> {
    return this.call('putGuestPmemByID', { path: { id: body.id }, body });
  }
  patchGuestPmemByID(body: PartialPmem): Promise<void> {
    return this.call('patchGuestPmemByID', { path: { id: body.id }, body });
  }
  putLogger(body: Logger): Promise<void> {
    return this.call('putLogger', { body });
  }
  getMachineConfiguration(): Promise<MachineConfiguration> {
    return this.call('getMachineConfiguration');
  }
  putMachineConfiguration(body: MachineConfiguration): Promise<void> {
    return this.call('putMachineConfiguration', { body });
  }
  patchMachineConfiguration(body: Partial<MachineConfiguration>): Promise<void> {
    return this.call('patchMachineConfiguration', { body });
  }
  putMetrics(body: Metrics): Promise<void> {
    return this.call('putMetrics', { body });
  }
  putMmds(body: Record<string, unknown>): Promise<void> {
    return this.call('putMmds', { body });
  }
  patchMmds(body: Record<string, unknown>): Promise<void> {
    return this.call('patchMmds', { body });
  }
  getMmds(): Promise<Record<string, unknown>> {
    return this.call('getMmds');
  }
  putMmdsConfig(body: MmdsConfig): Promise<void> {
    return this.call('putMmdsConfig', { body });
  }
  putEntropyDevice(body: EntropyDevice): Promise<void> {
    return this.call('putEntropyDevice', { body });
  }
  putSerialDevice(body: SerialDevice): Promise<void> {
    return this.call('putSerialDevice', { body });
  }
  putMemoryHotplug(body: MemoryHotplugConfig): Promise<void> {
    return this.call('putMemoryHotplug', { body });
  }
  patchMemoryHotplug(requested_size_mib: number): Promise<void> {
    return this.call('patchMemoryHotplug', { body: { requested_size_mib } });
  }
  getMemoryHotplug(): Promise<MemoryHotplugStatus> {
    return this.call('getMemoryHotplug');
  }
  putGuestNetworkInterfaceByID(body: NetworkInterface): Promise<void> {
    return this.call('putGuestNetworkInterfaceByID', { path: { iface_id: body.iface_id }, body });
  }
  patchGuestNetworkInterfaceByID(body: PartialNetworkInterface): Promise<void> {
    return this.call('patchGuestNetworkInterfaceByID', { path: { iface_id: body.iface_id }, body });
  }
  createSnapshot(body: SnapshotCreateParams, timeoutMs?: number): Promise<void> {
    return this.call('createSnapshot', { body }, timeoutMs);
  }
  loadSnapshot(body: SnapshotLoadParams, timeoutMs?: number): Promise<void> {
    return this.call('loadSnapshot', { body }, timeoutMs);
  }
  getFirecrackerVersion(): Promise<{ firecracker_version: string }> {
    return this.call('getFirecrackerVersion');
  }
  patchVm(state: 'Paused' | 'Resumed'): Promise<void> {
    return this.call('patchVm', { body: { state } });
  }
  getExportVmConfig(): Promise<FullVmConfiguration> {
    return this.call('getExportVmConfig');
  }
  putGuestVsock(body: Vsock): Promise<void> {
    return this.call('putGuestVsock', { body });
  }
}
