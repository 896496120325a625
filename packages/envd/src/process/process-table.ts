/**
 * The processes envd is running, by pid (and tag), from start until their
 * end event: `Connect`, `List`, `SendInput`, `SendSignal`, `Update` and
 * `CloseStdin` find processes here.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import { ManagedProcess, type ProcessConfigInfo } from './managed-process.js';
import type { ProcessHandle } from './process-handle.js';

/** A process selector: `{pid}` or `{tag}` (the proto oneof). */
export type Selector =
  | { readonly case: 'pid'; readonly value: number }
  | { readonly case: 'tag'; readonly value: string }
  | { readonly case: undefined; readonly value?: undefined };

/** The running processes. */
export class ProcessTable {
  readonly #byPid = new Map<number, ManagedProcess>();

  /** Registers a started process until its end. */
  add(
    handle: ProcessHandle,
    config: ProcessConfigInfo,
    tag: string | undefined,
    isPty: boolean,
  ): ManagedProcess {
    const proc = new ManagedProcess(handle, config, tag, isPty);
    this.#byPid.set(proc.pid, proc);
    void proc.ended.then(() => {
      if (this.#byPid.get(proc.pid) === proc) this.#byPid.delete(proc.pid);
    });
    return proc;
  }

  /**
   * The process a selector names.
   * @throws {AenvError} `ENVD_PROCESS_NOT_FOUND`, or `INVALID_ARGUMENT` for an empty selector.
   */
  get(selector: Selector | undefined): ManagedProcess {
    if (selector?.case === 'pid') {
      const proc = this.#byPid.get(selector.value);
      if (proc !== undefined) return proc;
      throw new AenvError(
        'ENVD_PROCESS_NOT_FOUND',
        `process with pid ${selector.value} not found`,
        {
          fields: { pid: selector.value },
        },
      );
    }
    if (selector?.case === 'tag') {
      for (const proc of this.#byPid.values()) if (proc.tag === selector.value) return proc;
      throw new AenvError(
        'ENVD_PROCESS_NOT_FOUND',
        `process with tag ${selector.value} not found`,
        {
          fields: { tag: selector.value },
        },
      );
    }
    throw new AenvError('INVALID_ARGUMENT', 'no process selected (give a pid or a tag)');
  }

  /** Every running process. */
  list(): ManagedProcess[] {
    return [...this.#byPid.values()];
  }

  /** Kills every process group (envd shutdown). */
  killAll(): void {
    for (const proc of this.#byPid.values()) proc.signal('SIGKILL');
  }
}
