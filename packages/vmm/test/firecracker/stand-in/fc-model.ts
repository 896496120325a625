/**
 * The stand-in VMM's request dispatch (test code): Firecracker's phase
 * rules first (pre-boot-only requests refused after `InstanceStart` or a
 * snapshot load, runtime requests refused before), then the handler; a
 * successful boot-specific configuration commits the process to the boot
 * path, after which loading a snapshot is refused.
 *
 * @module
 */
import { configHandlers } from './fc-config-handlers.js';
import { fault, newCore, type Answer, type Core, type Handler, type ModelEnv } from './fc-core.js';
import { BOOT_PATH_OPERATIONS, phaseFault } from './fc-rules.js';
import { runtimeHandlers } from './fc-runtime-handlers.js';

/** See the module comment. */
export class FcModel {
  readonly core: Core;
  readonly #handlers: Record<string, Handler>;
  #bootPath = false;

  constructor(env: ModelEnv) {
    this.core = newCore(env);
    this.#handlers = {
      ...configHandlers(this.core),
      ...runtimeHandlers(this.core, () => this.#bootPath),
    };
  }

  /** Handles one validated request. */
  handle(operationId: string, params: Readonly<Record<string, string>>, body: unknown): Answer {
    const started = this.core.state !== 'Not started';
    const actionType = (body as { action_type?: string } | undefined)?.action_type;
    const wrongPhase = phaseFault(operationId, started, actionType);
    if (wrongPhase !== undefined) return fault(wrongPhase);
    const counters = this.core.counters;
    counters.set(operationId, (counters.get(operationId) ?? 0) + 1);
    const handler = this.#handlers[operationId];
    if (handler === undefined) return fault(`${operationId} is not emulated by the stand-in`);
    const answer = handler(params, body);
    if (answer.status < 300 && BOOT_PATH_OPERATIONS.has(operationId)) this.#bootPath = true;
    return answer;
  }
}
