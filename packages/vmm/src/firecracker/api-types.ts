/**
 * Request and response bodies of Firecracker's REST API, v1.16
 * (`swagger: 2.0`, definitions section), as TypeScript types. Field names
 * are the wire names (snake_case); optional fields are optional here too.
 * Firecracker rejects fields it does not know (serde `deny_unknown_fields`),
 * so these types are closed on purpose.
 *
 * @module
 */

/** `TokenBucket`. */
export interface TokenBucket {
  size: number;
  refill_time: number;
  one_time_burst?: number;
}

/** `RateLimiter`. */
export interface RateLimiter {
  bandwidth?: TokenBucket;
  ops?: TokenBucket;
}

/** `CpuTemplate` (deprecated static templates). */
export type CpuTemplate = 'C3' | 'T2' | 'T2S' | 'T2CL' | 'T2A' | 'V1N1' | 'None';

/** `MachineConfiguration`. */
export interface MachineConfiguration {
  vcpu_count: number;
  mem_size_mib: number;
  smt?: boolean;
  track_dirty_pages?: boolean;
  cpu_template?: CpuTemplate;
  huge_pages?: 'None' | '2M';
}

/** `BootSource`. */
export interface BootSource {
  kernel_image_path: string;
  initrd_path?: string;
  boot_args?: string;
}

/** `Drive` (virtio-block form; the vhost-user form sets `socket` instead of the path). */
export interface Drive {
  drive_id: string;
  is_root_device: boolean;
  partuuid?: string;
  cache_type?: 'Unsafe' | 'Writeback';
  is_read_only?: boolean;
  path_on_host?: string;
  rate_limiter?: RateLimiter;
  io_engine?: 'Sync' | 'Async';
  socket?: string;
}

/** `PartialDrive`. */
export interface PartialDrive {
  drive_id: string;
  path_on_host?: string;
  rate_limiter?: RateLimiter;
}

/** `Pmem`. */
export interface Pmem {
  id: string;
  path_on_host: string;
  root_device?: boolean;
  read_only?: boolean;
  rate_limiter?: RateLimiter;
}

/** `PartialPmem`. */
export interface PartialPmem {
  id: string;
  rate_limiter?: RateLimiter;
}

/** `NetworkInterface`. */
export interface NetworkInterface {
  iface_id: string;
  host_dev_name: string;
  guest_mac?: string;
  mtu?: number;
  rx_rate_limiter?: RateLimiter;
  tx_rate_limiter?: RateLimiter;
}

/** `PartialNetworkInterface`. */
export interface PartialNetworkInterface {
  iface_id: string;
  rx_rate_limiter?: RateLimiter;
  tx_rate_limiter?: RateLimiter;
}

/** `Balloon`. */
export interface Balloon {
  amount_mib: number;
  deflate_on_oom: boolean;
  stats_polling_interval_s?: number;
  free_page_hinting?: boolean;
  free_page_reporting?: boolean;
}

/** `BalloonStats` (required fields; the rest are guest counters when the guest reports them). */
export interface BalloonStats {
  target_pages: number;
  actual_pages: number;
  target_mib: number;
  actual_mib: number;
  [counter: string]: number;
}

/** `BalloonHintingStatus`. */
export interface BalloonHintingStatus {
  host_cmd: number;
  guest_cmd?: number;
}

/** `EntropyDevice`. */
export interface EntropyDevice {
  rate_limiter?: RateLimiter;
}

/** `Logger`. */
export interface Logger {
  log_path?: string;
  level?: 'Error' | 'Warning' | 'Info' | 'Debug' | 'Trace' | 'Off';
  show_level?: boolean;
  show_log_origin?: boolean;
  module?: string;
}

/** `Metrics`. */
export interface Metrics {
  metrics_path: string;
}

/** `SerialDevice`. */
export interface SerialDevice {
  serial_out_path?: string;
  rate_limiter?: TokenBucket;
}

/** `Vsock`. */
export interface Vsock {
  guest_cid: number;
  uds_path: string;
  vsock_id?: string;
}

/** `MmdsConfig`. */
export interface MmdsConfig {
  network_interfaces: string[];
  version?: 'V1' | 'V2';
  ipv4_address?: string;
  imds_compat?: boolean;
}

/** `MemoryHotplugConfig`. */
export interface MemoryHotplugConfig {
  total_size_mib?: number;
  slot_size_mib?: number;
  block_size_mib?: number;
}

/** `MemoryHotplugStatus`. */
export interface MemoryHotplugStatus extends MemoryHotplugConfig {
  plugged_size_mib?: number;
  requested_size_mib?: number;
}

/** `CpuConfig`: custom CPU template; modifiers are passed through as given. */
export interface CpuConfig {
  kvm_capabilities?: string[];
  cpuid_modifiers?: unknown[];
  msr_modifiers?: unknown[];
  reg_modifiers?: unknown[];
  vcpu_features?: unknown[];
}

/** `InstanceActionInfo.action_type`. */
export type ActionType = 'FlushMetrics' | 'InstanceStart' | 'SendCtrlAltDel';

/** `InstanceInfo`. */
export interface InstanceInfo {
  app_name: string;
  id: string;
  state: 'Not started' | 'Running' | 'Paused';
  vmm_version: string;
}

/** `SnapshotCreateParams`. */
export interface SnapshotCreateParams {
  mem_file_path: string;
  snapshot_path: string;
  snapshot_type?: 'Full' | 'Diff';
}

/** `MemoryBackend`. */
export interface MemoryBackend {
  backend_type: 'File' | 'Uffd';
  backend_path: string;
}

/** `NetworkOverride`. */
export interface NetworkOverride {
  iface_id: string;
  host_dev_name: string;
}

/** `SnapshotLoadParams`. */
export interface SnapshotLoadParams {
  snapshot_path: string;
  mem_backend?: MemoryBackend;
  /** Deprecated in favour of `mem_backend`; mutually exclusive with it. */
  mem_file_path?: string;
  track_dirty_pages?: boolean;
  /** Deprecated alias of `track_dirty_pages`. */
  enable_diff_snapshots?: boolean;
  resume_vm?: boolean;
  network_overrides?: NetworkOverride[];
  vsock_override?: { uds_path: string };
  clock_realtime?: boolean;
}

/** `FullVmConfiguration` (`GET /vm/config`). */
export interface FullVmConfiguration {
  balloon?: Balloon;
  drives?: Drive[];
  'boot-source'?: BootSource;
  'cpu-config'?: CpuConfig;
  logger?: Logger;
  'machine-config'?: MachineConfiguration;
  metrics?: Metrics;
  'memory-hotplug'?: MemoryHotplugConfig;
  'mmds-config'?: MmdsConfig;
  'network-interfaces'?: NetworkInterface[];
  pmem?: Pmem[];
  vsock?: Vsock;
  entropy?: EntropyDevice;
}
