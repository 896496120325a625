/**
 * The stand-in VMM's state (test code): the pre-boot configuration, the
 * instance state, the guest's pages, the telemetry sinks. Handlers in
 * `fc-config-handlers.ts` and `fc-runtime-handlers.ts` act on it.
 *
 * @module
 */
import type { Server } from 'node:net';
import type {
  Balloon,
  BootSource,
  Drive,
  EntropyDevice,
  MachineConfiguration,
  MemoryHotplugConfig,
  MmdsConfig,
  NetworkInterface,
  Pmem,
  SerialDevice,
  Vsock,
} from '../../../src/firecracker/api-types.js';
import type { GuestState } from './fc-guest.js';
import type { LineSink, PathView } from './fc-io.js';

/** What the stand-in process gives the model. */
export interface ModelEnv {
  readonly id: string;
  /** The version the stand-in claims, e.g. `1.16.1`. */
  readonly version: string;
  readonly paths: PathView;
  /** Writes guest console output (the VMM's stdout). */
  readonly console: (text: string) => void;
  /** Ends the process with `code` once the current answer is sent. */
  readonly exit: (code: number) => void;
}

/** An API answer. */
export interface Answer {
  readonly status: number;
  readonly body?: unknown;
}

/** One request handler. */
export type Handler = (params: Readonly<Record<string, string>>, body: any) => Answer; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Instance states of `InstanceInfo`. */
export type InstanceState = 'Not started' | 'Running' | 'Paused';

/** The configuration Firecracker accumulates before boot (and keeps after). */
export interface VmmConfig {
  machine: MachineConfiguration;
  boot: BootSource | undefined;
  drives: Map<string, Drive>;
  nets: Map<string, NetworkInterface>;
  pmem: Map<string, Pmem>;
  balloon: Balloon | undefined;
  entropy: EntropyDevice | undefined;
  vsock: Vsock | undefined;
  serial: SerialDevice | undefined;
  mmdsConfig: MmdsConfig | undefined;
  mmds: Record<string, unknown> | undefined;
  hotplug: (MemoryHotplugConfig & { requested_size_mib?: number }) | undefined;
  cpuConfig: unknown;
}

/** The model's whole state. */
export interface Core {
  readonly env: ModelEnv;
  readonly cfg: VmmConfig;
  state: InstanceState;
  /** Dirty-page tracking (machine config, or the load request). */
  trackDirty: boolean;
  guest: GuestState | undefined;
  /** The boot marker page (page 1 of guest RAM). */
  marker: string;
  /** Pages written since the last snapshot or load. */
  dirty: Set<number>;
  logger: { sink: LineSink; level: number } | undefined;
  metrics: LineSink | undefined;
  vsockServer: Server | undefined;
  /** Requests served, by operation id (for the metrics). */
  readonly counters: Map<string, number>;
}

/** Firecracker's log levels, most severe first. */
export const LOG_LEVELS = ['Off', 'Error', 'Warning', 'Info', 'Debug', 'Trace'] as const;

/** A fresh core with Firecracker's defaults (1 vCPU, 128 MiB). */
export function newCore(env: ModelEnv): Core {
  return {
    env,
    cfg: {
      machine: { vcpu_count: 1, mem_size_mib: 128, smt: false, track_dirty_pages: false },
      boot: undefined,
      drives: new Map(),
      nets: new Map(),
      pmem: new Map(),
      balloon: undefined,
      entropy: undefined,
      vsock: undefined,
      serial: undefined,
      mmdsConfig: undefined,
      mmds: undefined,
      hotplug: undefined,
      cpuConfig: undefined,
    },
    state: 'Not started',
    trackDirty: false,
    guest: undefined,
    marker: '',
    dirty: new Set(),
    logger: undefined,
    metrics: undefined,
    vsockServer: undefined,
    counters: new Map(),
  };
}

/** A 400 answer with Firecracker's error body. */
export function fault(message: string): Answer {
  return { status: 400, body: { fault_message: message } };
}

/** A 204 answer. */
export const NO_CONTENT: Answer = { status: 204 };

/** Writes a log line at `level` if the logger is configured for it. */
export function log(core: Core, level: 'Error' | 'Warning' | 'Info' | 'Debug', text: string): void {
  const l = core.logger;
  if (l === undefined || LOG_LEVELS.indexOf(level) > l.level) return;
  l.sink.line(`${new Date().toISOString()} [${core.env.id}:main] ${level.toUpperCase()} ${text}`);
}
