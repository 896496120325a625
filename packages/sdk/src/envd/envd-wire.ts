/**
 * The proto3-JSON shapes of envd's `process.Process` and
 * `filesystem.Filesystem` messages that the SDK sends and reads, written
 * out as plain types (the SDK depends on no generated code; the `.proto`
 * files are `packages/envd/proto/`). `bytes` are base64 strings, `int64`
 * may be a string or a number, enums are names, oneofs are the chosen field.
 *
 * @module
 */

/** `process.ProcessConfig`. */
export interface ProcessConfigWire {
  readonly cmd: string;
  readonly args?: readonly string[];
  readonly envs?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** `process.ProcessSelector` (the SDK always selects by pid). */
export interface ProcessSelectorWire {
  readonly pid: number;
}

/** `process.PTY.Size`. */
export interface PtySizeWire {
  readonly cols: number;
  readonly rows: number;
}

/** `process.StartRequest`. */
export interface StartRequestWire {
  readonly process: ProcessConfigWire;
  readonly pty?: { readonly size: PtySizeWire };
  readonly tag?: string;
  readonly stdin?: boolean;
}

/** `process.ProcessEvent` as it arrives (one field set). */
export interface ProcessEventWire {
  readonly start?: { readonly pid?: number };
  readonly data?: { readonly stdout?: string; readonly stderr?: string; readonly pty?: string };
  readonly end?: {
    readonly exitCode?: number;
    readonly exited?: boolean;
    readonly status?: string;
    readonly error?: string;
  };
  readonly keepalive?: Record<string, never>;
}

/** `process.StartResponse` / `process.ConnectResponse`. */
export interface ProcessStreamMessageWire {
  readonly event?: ProcessEventWire;
}

/** `process.ListResponse`. */
export interface ListResponseWire {
  readonly processes?: readonly {
    readonly config?: ProcessConfigWire;
    readonly pid?: number;
    readonly tag?: string;
  }[];
}

/** `filesystem.FileType`. */
export type FileTypeWire =
  'FILE_TYPE_UNSPECIFIED' | 'FILE_TYPE_FILE' | 'FILE_TYPE_DIRECTORY' | 'FILE_TYPE_SYMLINK';

/** `filesystem.EntryInfo`. */
export interface EntryInfoWire {
  readonly name?: string;
  readonly type?: FileTypeWire | number;
  readonly path?: string;
  readonly size?: string | number;
  readonly mode?: number;
  readonly permissions?: string;
  readonly owner?: string;
  readonly group?: string;
  readonly modifiedTime?: string;
  readonly symlinkTarget?: string;
}

/** Responses that carry one entry (`Stat`, `MakeDir`, `Move`). */
export interface EntryResponseWire {
  readonly entry?: EntryInfoWire;
}

/** `filesystem.ListDirResponse`. */
export interface ListDirResponseWire {
  readonly entries?: readonly EntryInfoWire[];
}
