/**
 * The VMM driver interface: the one contract every virtual machine monitor
 * backend implements (`qemu`, `firecracker`). The daemon only ever sees
 * these types; `@aenv/testkit`'s `runVmmDriverSuite` is the contract every
 * driver runs.
 *
 * Contract:
 * - a {@link VmmDriver} starts VMs: `boot` from a kernel, `restore` from a
 *   snapshot directory written earlier by {@link Vm.snapshot} of the same
 *   driver kind, virtualization mode and VMM version (anything else is
 *   refused with `VMM_SNAPSHOT_INCOMPATIBLE`);
 * - a {@link Vm} is a state machine (see `vm-state.ts`); each operation
 *   checks the state it starts from and throws `VMM_INVALID_STATE` otherwise;
 * - an operation a driver cannot do throws `VMM_NOT_SUPPORTED` naming the
 *   driver, never a silent no-op; optional features are listed in
 *   {@link VmmDriver.capabilities} so callers can check before use;
 * - snapshot memory is a file that restores map copy-on-write, so clones of
 *   one snapshot share its clean pages through the host page cache.
 *
 * @module
 */
import type { SnapshotManifest } from './snapshot-manifest.js';
import type { VmState } from './vm-state.js';

/** The driver implementations aenv knows. */
export type VmmDriverKind = 'qemu' | 'firecracker' | 'fake';

/** How guest code runs: hardware virtualization or QEMU's software emulator. */
export type VirtualizationMode = 'kvm' | 'tcg';

/**
 * Optional features a driver may have.
 * - `pause`: `pause()`/`resume()`.
 * - `snapshot`: `snapshot()` of a booted VM.
 * - `restore`: `restore()`.
 * - `cow-restore`: restores map the snapshot memory copy-on-write (clones share clean pages).
 * - `snapshot-after-restore`: `snapshot()` of a VM that was itself restored.
 * - `snapshot-keep-paused`: `snapshot({ after: 'pause' })`, the VM can resume afterwards.
 * - `nbd-drives`: drives served over NBD on a unix socket.
 * - `qcow2-drives`: qcow2 drive files (per-clone copy-on-write layers).
 * - `prepared-restore`: `prepareRestore()`, a restore started ahead of need.
 */
export type VmmCapability =
  | 'pause'
  | 'snapshot'
  | 'restore'
  | 'cow-restore'
  | 'snapshot-after-restore'
  | 'snapshot-keep-paused'
  | 'nbd-drives'
  | 'qcow2-drives'
  | 'prepared-restore';

/** Where a drive's bytes come from. */
export type DriveSource =
  | { readonly kind: 'file'; readonly path: string; readonly format: 'raw' | 'qcow2' }
  | { readonly kind: 'nbd'; readonly socket: string; readonly export: string };

/** A block device attached to a VM. */
export interface DriveSpec {
  /**
   * Drive id, `[a-z0-9-]{1,20}`; the guest sees it as the virtio-blk serial
   * (`/sys/block/vdX/serial`). The guest init looks for `rootfs` and `tools`.
   */
  readonly id: string;
  /** The backing file or NBD export. */
  readonly source: DriveSource;
  /** Whether the guest sees a read-only device. */
  readonly readOnly: boolean;
}

/** The VM's network interface: a tap device, optionally inside a network namespace. */
export interface NetworkSpec {
  /**
   * Network namespace the VMM process runs in: a name under `/run/netns` or
   * an absolute path (`/proc/<pid>/ns/net`). Omitted: the caller's namespace.
   */
  readonly netns?: string;
  /** Name of an existing tap device (inside `netns`). */
  readonly tap: string;
  /** The guest's MAC address, `xx:xx:xx:xx:xx:xx`. */
  readonly mac: string;
}

/**
 * Guest identity and addressing, passed to the guest init on the kernel
 * command line (`aenv.hostname`, `aenv.ip`, `aenv.gw`, `aenv.dns`). Applied at
 * boot only: a restored VM keeps what its snapshot had.
 */
export interface GuestParams {
  /** Hostname, `[A-Za-z0-9-]{1,63}`. */
  readonly hostname?: string;
  /** The guest's eth0 address with prefix, e.g. `169.254.0.21/30`. */
  readonly address?: string;
  /** Default gateway. */
  readonly gateway?: string;
  /** DNS servers written to the guest's `/etc/resolv.conf`. */
  readonly dns?: readonly string[];
}

/** Serial console options shared by boot and restore. */
export interface ConsoleSpec {
  /** Where the serial console is written. Default: `<runDir>/serial.log`. */
  readonly serialLog?: string;
  /**
   * Bound of the serial log: when the file reaches half of it, it is rotated
   * to `<serialLog>.1`, so at most this many bytes are kept on disk.
   * @default 2 MiB
   */
  readonly serialLogMaxBytes?: number;
}

/** What `boot` needs. */
export interface VmSpec extends ConsoleSpec {
  /** The VM's id (the sandbox id); events carry it as `sandbox.id`. */
  readonly id: string;
  /** Virtual CPUs, 1..64. */
  readonly vcpus: number;
  /** Guest memory in MiB, 64..262144. */
  readonly memoryMiB: number;
  /** Uncompressed kernel (PVH-bootable `vmlinux` for QEMU microvm). */
  readonly kernel: string;
  /** Initramfs. */
  readonly initrd?: string;
  /** Kernel command-line arguments appended after the driver's own. */
  readonly cmdline?: readonly string[];
  /** Hostname and addressing for the guest init. */
  readonly guest?: GuestParams;
  /** Drives, attached in this order. */
  readonly drives: readonly DriveSpec[];
  /** The network interface; omitted: no network device. */
  readonly network?: NetworkSpec;
  /** Directory for the VM's sockets, pid file and (booted VMs) memory file; created if missing. */
  readonly runDir: string;
}

/** What `restore` needs besides the snapshot. */
export interface RestoreSpec extends ConsoleSpec {
  /** The new VM's id. */
  readonly id: string;
  /** Drives with the same ids, order and read-only flags as at snapshot time, new sources. */
  readonly drives: readonly DriveSpec[];
  /** Present exactly when the snapshot had a network device; the MAC must be the snapshot's. */
  readonly network?: NetworkSpec;
  /** As in {@link VmSpec.runDir}. */
  readonly runDir: string;
}

/** Where `snapshot` writes, and what becomes of the VM afterwards. */
export interface SnapshotTarget {
  /** A directory that does not exist yet or is empty; `manifest.json` is written last. */
  readonly dir: string;
  /**
   * `stop` (default): the VM ends into the snapshot (cheapest; its memory
   * file becomes the snapshot's). `pause`: the VM stays paused and may
   * resume; needs the `snapshot-keep-paused` capability.
   */
  readonly after?: 'stop' | 'pause';
}

/** A snapshot written by {@link Vm.snapshot}. */
export interface SnapshotRef {
  /** The snapshot directory (holds `manifest.json`). */
  readonly dir: string;
}

/** Why a VM's process ended. */
export type ExitReason = 'stop' | 'snapshot' | 'guest' | 'crash';

/** How a VM ended. */
export interface ExitInfo {
  /** `stop`: `stop()` was called; `snapshot`: ended into a snapshot; `guest`: the guest powered off or rebooted; `crash`: anything else. */
  readonly reason: ExitReason;
  /** The VMM process's exit code, or null when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it, if any. */
  readonly signal: NodeJS.Signals | null;
  /** For `crash`: the end of the VMM's stderr. */
  readonly message?: string;
}

/** Options of {@link Vm.waitForConsole}. */
export interface ConsoleWaitOptions {
  /** Give up after this long. @default 30 000 */
  readonly timeoutMs?: number;
  /** Abort the wait. */
  readonly signal?: AbortSignal;
}

/** A running (or ended) virtual machine. */
export interface Vm extends AsyncDisposable {
  /** The id given in the spec. */
  readonly id: string;
  /** The driver that runs it. */
  readonly driver: VmmDriverKind;
  /** Current lifecycle state. */
  readonly state: VmState;
  /** The VMM process id while it runs. */
  readonly pid: number | undefined;
  /** Path of the serial console log. */
  readonly serialLog: string;
  /**
   * Stops guest execution.
   * @throws {AenvError} `VMM_INVALID_STATE` unless running.
   */
  pause(): Promise<void>;
  /**
   * Continues a paused guest.
   * @throws {AenvError} `VMM_INVALID_STATE` unless paused.
   */
  resume(): Promise<void>;
  /**
   * Saves memory and device state of a paused VM (see {@link SnapshotTarget}).
   * @throws {AenvError} `VMM_INVALID_STATE` unless paused; `VMM_NOT_SUPPORTED`;
   *   `VMM_SNAPSHOT_FAILED` (the partial snapshot is removed).
   */
  snapshot(to: SnapshotTarget): Promise<SnapshotManifest>;
  /**
   * Ends the VM: asks the VMM to quit, kills it after `graceMs`, removes its
   * sockets and owned files. Idempotent; resolves with the exit info.
   */
  stop(opts?: { readonly graceMs?: number }): Promise<ExitInfo>;
  /** Resolves when the VMM process has ended, however it ended. */
  wait(): Promise<ExitInfo>;
  /** The last few kilobytes of serial console output. */
  consoleTail(): string;
  /**
   * Resolves with the console text seen so far once `pattern` matches output
   * produced by this VM (from boot or restore on).
   * @throws {AenvError} `VMM_TIMEOUT`; `VMM_PROCESS_EXITED` if the VM ends first.
   */
  waitForConsole(pattern: RegExp, opts?: ConsoleWaitOptions): Promise<string>;
}

/** Where a {@link PreparedRestore} stands. */
export type PreparedRestoreState = 'waiting' | 'completing' | 'completed' | 'cancelled' | 'ended';

/** Options of {@link PreparedRestore.complete}. */
export interface CompleteRestoreOptions {
  /**
   * The id the VM takes from now on ({@link Vm.id}, `sandbox.id` of its
   * events), `[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`. Default: the prepared spec's
   * id. Paths (run directory, sockets, serial log) stay the prepared ones.
   */
  readonly id?: string;
  /** Abort the completion: the VMM is killed and the abort reason thrown. */
  readonly signal?: AbortSignal;
}

/**
 * A restore done ahead of need, up to the last step: the VMM process runs
 * with the snapshot's machine, the spec's drives and network, guest RAM
 * mapped (and the snapshot's RAM diff written into it), waiting for its
 * device state. `complete()` loads the device state and continues the
 * guest: what is left of a restore's critical path.
 *
 * Contract: exactly one of `complete()` and `cancel()` takes effect; the
 * prepared VMM never runs guest code before `complete()`; the resources in
 * the spec (drives, tap) stay in use until the VM ends or `cancel()`
 * resolves. If the waiting process dies, `state` becomes `ended`, `ended`
 * resolves and `complete()` fails; the caller still calls `cancel()` (a
 * no-op then) before it releases the spec's resources.
 */
export interface PreparedRestore {
  /** The prepared spec's id. */
  readonly id: string;
  /** The snapshot it restores. */
  readonly snapshot: SnapshotRef;
  readonly state: PreparedRestoreState;
  /** The waiting VMM process, while it waits. */
  readonly pid: number | undefined;
  /** Resolves if the VMM process ends while it waits (it died, or `cancel()`). */
  readonly ended: Promise<void>;
  /**
   * Loads the device state and continues the guest.
   * @throws {AenvError} `VMM_INVALID_STATE` unless waiting; `VMM_RESTORE_FAILED`
   *   (the VMM is killed); the abort reason.
   */
  complete(options?: CompleteRestoreOptions): Promise<Vm>;
  /** Kills the waiting VMM and removes its run-directory files. Idempotent; a no-op once completed. */
  cancel(): Promise<void>;
}

/** A VMM backend. */
export interface VmmDriver {
  /** Which implementation this is. */
  readonly kind: VmmDriverKind;
  /** How its guests run. */
  readonly mode: VirtualizationMode;
  /** Optional features it has. */
  readonly capabilities: ReadonlySet<VmmCapability>;
  /**
   * Boots a VM from a kernel. Resolves once guest execution has started.
   * @throws {AenvError} `INVALID_ARGUMENT`, `VMM_START_FAILED`, `VMM_TIMEOUT`.
   */
  boot(spec: VmSpec, signal?: AbortSignal): Promise<Vm>;
  /**
   * Starts a VM from a snapshot. Resolves once the guest runs again.
   * @throws {AenvError} `VMM_SNAPSHOT_INVALID`, `VMM_SNAPSHOT_INCOMPATIBLE`,
   *   `VMM_RESTORE_FAILED`, `VMM_START_FAILED`, `VMM_TIMEOUT`.
   */
  restore(snapshot: SnapshotRef, spec: RestoreSpec, signal?: AbortSignal): Promise<Vm>;
  /**
   * Does everything of a restore but its last step (see {@link PreparedRestore}),
   * with the same checks as {@link restore}. Needs the `prepared-restore` capability.
   * @throws {AenvError} `VMM_NOT_SUPPORTED`; as {@link restore}.
   */
  prepareRestore(
    snapshot: SnapshotRef,
    spec: RestoreSpec,
    signal?: AbortSignal,
  ): Promise<PreparedRestore>;
}
