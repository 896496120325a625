/**
 * A sandbox's rootfs disk: what the VMM attaches, and what the lifecycle
 * work (pause, snapshot, fork) needs of it — sealing the writable upper
 * into an immutable layer while the sandbox continues on a fresh upper.
 *
 * `SandboxDisks` is the seam the microVM launcher takes its disks from;
 * `NodeStorage` (the storage engine over NBD) is the real one.
 * `EngineDisk` is one NBD export of an image stack with its upper in the
 * sandbox's directory.
 *
 * @module
 */
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import {
  deleteUpper,
  type ImageSpec,
  type NbdServer,
  type SealOptions,
  type SealResult,
} from '@aenv/storage';
import type { DriveSource } from '@aenv/vmm';

/** A sandbox's rootfs disk. */
export interface SandboxDisk {
  /** What the VMM attaches as the rootfs drive. */
  readonly source: DriveSource;
  /** The layers under the upper now, base first (grows with each seal). */
  readonly image: Required<ImageSpec>;
  /**
   * Seals the upper into a new layer in the blob store and continues on a
   * fresh, empty upper above it; the VM stays attached. Cost is
   * proportional to what was written since the last seal. For a consistent
   * file system, pause the VM (or freeze the guest file system) first.
   * @returns the new layer and the sealed stack (`result.image`), which
   *   other disks (a fork, a resume elsewhere) can open with their own uppers.
   */
  seal(options?: SealOptions): Promise<SealResult>;
  /** Makes every write acknowledged so far durable in the upper. */
  flush(): Promise<void>;
  /** Stops serving the disk and deletes its upper; sealed layers stay. Idempotent. */
  close(): Promise<void>;
}

/** What a launcher asks for: an image served with a fresh upper. */
export interface OpenImageRequest {
  /** Export name: the sandbox id (`[A-Za-z0-9._-]`, at most 64 characters). */
  readonly name: string;
  readonly image: ImageSpec;
  /** Directory of the new upper; must not hold one yet. */
  readonly upperDir: string;
}

/** Where sandboxes' rootfs disks come from. */
export interface SandboxDisks {
  /**
   * Serves `image` with a fresh upper for one sandbox.
   * @throws {AenvError} `SBX_DISK_FAILED`, `BLOB_STORE_UNAVAILABLE`, `STORAGE_NO_SPACE`.
   */
  openImage(request: OpenImageRequest): Promise<SandboxDisk>;
}

/** What an {@link EngineDisk} is made of. */
export interface EngineDiskParts {
  readonly server: NbdServer;
  /** The export name (the sandbox id). */
  readonly name: string;
  readonly socketPath: string;
  readonly image: Required<ImageSpec>;
  readonly upperDir: string;
  /** Called once the disk is closed. */
  readonly onClosed: () => void;
  /** Called with the digest of every layer a seal wrote. */
  readonly onSealed?: (digest: string) => void;
}

/** One NBD export of an image stack with a writable upper. */
export class EngineDisk implements SandboxDisk {
  readonly source: DriveSource;
  readonly name: string;
  readonly upperDir: string;
  readonly #server: NbdServer;
  readonly #onClosed: () => void;
  readonly #onSealed: ((digest: string) => void) | undefined;
  #image: Required<ImageSpec>;
  #closing: Promise<void> | undefined;

  constructor(parts: EngineDiskParts) {
    this.#server = parts.server;
    this.name = parts.name;
    this.upperDir = parts.upperDir;
    this.#image = parts.image;
    this.#onClosed = parts.onClosed;
    this.#onSealed = parts.onSealed;
    this.source = { kind: 'nbd', socket: parts.socketPath, export: parts.name };
  }

  get image(): Required<ImageSpec> {
    return this.#image;
  }

  async seal(options?: SealOptions): Promise<SealResult> {
    this.#assertOpen();
    const result = await this.#server.sealExport(this.name, options);
    this.#onSealed?.(result.digest);
    this.#image = result.image;
    return result;
  }

  flush(): Promise<void> {
    this.#assertOpen();
    return this.#server.flushExport(this.name);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await this.#server.removeExport(this.name).catch((err: unknown) => {
          // A closed or failed server has no exports left to remove.
          const gone = ['NBD_SERVER_CLOSED', 'NBD_WORKER_FAILED', 'NBD_EXPORT_NOT_FOUND'];
          if (!(err instanceof AenvError && gone.includes(err.code))) throw err;
        });
        await deleteUpper(this.upperDir);
        await deleteUpper(`${this.upperDir}.next`);
      } finally {
        this.#onClosed();
      }
    })();
    return this.#closing;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new AenvError('STORAGE_CLOSED', `the disk of ${this.name} is closed`, {
        fields: { [LOG_FIELDS.driveId]: this.name },
      });
    }
  }
}
