/**
 * `sandbox.files`: the sandbox's filesystem through envd: file contents
 * over envd's `/files` HTTP route (streamed both ways, raw
 * `application/octet-stream` uploads), metadata and directory operations
 * over the `filesystem.Filesystem` RPCs. Relative paths and `~` are from
 * the user's home, as in the e2b SDK.
 *
 * @module
 */
import { readAnswerBody, send, type RequestOptions } from '../api/http.js';
import { errorFromAnswer } from '../error-mapping.js';
import { AlreadyExistsError, FileNotFoundError, InternalError } from '../errors.js';
import { userHeader, type EnvdConnection } from './envd-connection.js';
import type { EntryInfoWire, EntryResponseWire, ListDirResponseWire } from './envd-wire.js';

/** A file, directory or symlink. */
export interface EntryInfo {
  readonly name: string;
  readonly type: 'file' | 'dir' | 'symlink';
  /** Absolute path. */
  readonly path: string;
  readonly size: number;
  /** Permission bits. */
  readonly mode: number;
  /** `-rw-r--r--` */
  readonly permissions: string;
  readonly owner: string;
  readonly group: string;
  readonly modifiedTime: Date | undefined;
  /** Absolute target of a symlink. */
  readonly symlinkTarget: string | undefined;
}

/** Options of file operations. */
export interface FileOptions extends RequestOptions {
  /** Act as this user (default: the sandbox's default user). */
  readonly user?: string;
}

/** What `write` accepts. */
export type FileData = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

const TYPES: Readonly<Record<string, EntryInfo['type']>> = {
  FILE_TYPE_FILE: 'file',
  FILE_TYPE_DIRECTORY: 'dir',
  FILE_TYPE_SYMLINK: 'symlink',
  1: 'file',
  2: 'dir',
  3: 'symlink',
};

/** Converts a wire entry; undefined for entries of unknown type (the e2b SDK drops them). */
export function toEntryInfo(e: EntryInfoWire | undefined): EntryInfo | undefined {
  const type = e?.type === undefined ? undefined : TYPES[String(e.type)];
  if (e === undefined || type === undefined) return undefined;
  return {
    name: e.name ?? '',
    type,
    path: e.path ?? '',
    size: Number(e.size ?? 0),
    mode: e.mode ?? 0,
    permissions: e.permissions ?? '',
    owner: e.owner ?? '',
    group: e.group ?? '',
    modifiedTime: e.modifiedTime === undefined ? undefined : new Date(e.modifiedTime),
    symlinkTarget: e.symlinkTarget,
  };
}

const notFound = { notFound: FileNotFoundError };

/** The filesystem of one sandbox. */
export class Files {
  readonly #connection: EnvdConnection;

  constructor(connection: EnvdConnection) {
    this.#connection = connection;
  }

  /** Reads a whole file as text (UTF-8). @throws {FileNotFoundError} */
  async read(path: string, options: FileOptions = {}): Promise<string> {
    return (await this.#download(path, options)).text();
  }

  /** Reads a whole file as bytes. @throws {FileNotFoundError} */
  async readBytes(path: string, options: FileOptions = {}): Promise<Uint8Array> {
    return new Uint8Array(await (await this.#download(path, options)).arrayBuffer());
  }

  /** Streams a file's bytes. @throws {FileNotFoundError} */
  async readStream(path: string, options: FileOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const res = await this.#download(path, options);
    if (res.body === null) return new Blob([]).stream();
    return res.body;
  }

  /**
   * Writes a file (created with its parent directories, or truncated),
   * streaming `data` when it is a stream. Resolves with the file's path.
   */
  async write(path: string, data: FileData, options: FileOptions = {}): Promise<string> {
    const res = await send(
      this.#connection.fetch,
      {
        url: this.#filesUrl(path, options.user),
        what: 'POST /files',
        init: {
          method: 'POST',
          headers: { ...this.#connection.headers(), 'content-type': 'application/octet-stream' },
          body: data as RequestInit['body'],
          // Node's fetch needs this to send a stream body.
          ...(data instanceof ReadableStream ? { duplex: 'half' as const } : {}),
        },
      },
      options,
    );
    const body = await readAnswerBody(res);
    if (res.status !== 200) throw errorFromAnswer(res.status, body, notFound);
    const first = Array.isArray(body) ? (body[0] as { path?: unknown } | undefined) : undefined;
    if (typeof first?.path !== 'string') {
      throw new InternalError(`POST /files answered without the written file`);
    }
    return first.path;
  }

  /** Lists a directory (`depth` levels; default 1). @throws {FileNotFoundError} */
  async list(path: string, options: FileOptions & { depth?: number } = {}): Promise<EntryInfo[]> {
    const res = await this.#rpc<ListDirResponseWire>(
      'ListDir',
      { path, depth: options.depth ?? 1 },
      options,
    );
    return (res.entries ?? []).map(toEntryInfo).filter((e): e is EntryInfo => e !== undefined);
  }

  /** Describes a path (a symlink itself, not its target). @throws {FileNotFoundError} */
  async getInfo(path: string, options: FileOptions = {}): Promise<EntryInfo> {
    const res = await this.#rpc<EntryResponseWire>('Stat', { path }, options);
    const entry = toEntryInfo(res.entry);
    if (entry === undefined) throw new InternalError(`Stat '${path}': no entry in the answer`);
    return entry;
  }

  /** Whether a path exists. */
  async exists(path: string, options: FileOptions = {}): Promise<boolean> {
    try {
      await this.getInfo(path, options);
      return true;
    } catch (err) {
      if (err instanceof FileNotFoundError) return false;
      throw err;
    }
  }

  /** Creates a directory and its parents; false when it existed already. */
  async makeDir(path: string, options: FileOptions = {}): Promise<boolean> {
    try {
      await this.#rpc('MakeDir', { path }, options);
      return true;
    } catch (err) {
      if (err instanceof AlreadyExistsError) return false;
      throw err;
    }
  }

  /** Removes a file or a directory tree (a missing path is fine). */
  async remove(path: string, options: FileOptions = {}): Promise<void> {
    await this.#rpc('Remove', { path }, options);
  }

  /** Moves or renames; resolves with the new entry. @throws {FileNotFoundError} */
  async rename(from: string, to: string, options: FileOptions = {}): Promise<EntryInfo> {
    const res = await this.#rpc<EntryResponseWire>(
      'Move',
      { source: from, destination: to },
      options,
    );
    const entry = toEntryInfo(res.entry);
    if (entry === undefined) throw new InternalError(`Move '${from}': no entry in the answer`);
    return entry;
  }

  #rpc<O>(method: string, input: unknown, options: FileOptions): Promise<O> {
    return this.#connection.rpc.unary<O>(`filesystem.Filesystem/${method}`, input, {
      ...options,
      ...notFound,
      headers: userHeader(options.user),
    });
  }

  async #download(path: string, options: FileOptions): Promise<Response> {
    const res = await send(
      this.#connection.fetch,
      {
        url: this.#filesUrl(path, options.user),
        what: 'GET /files',
        init: { method: 'GET', headers: this.#connection.headers() },
      },
      options,
    );
    if (res.status !== 200) throw errorFromAnswer(res.status, await readAnswerBody(res), notFound);
    return res;
  }

  #filesUrl(path: string, user: string | undefined): string {
    const query = new URLSearchParams({ path });
    if (user !== undefined) query.set('username', user);
    return `${this.#connection.sandboxUrl}/files?${query.toString()}`;
  }
}
