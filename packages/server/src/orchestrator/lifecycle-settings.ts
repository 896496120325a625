/**
 * What happens to a sandbox when its TTL expires, and whether traffic wakes
 * it, from E2B's create fields: `autoPause` (true = pause at timeout, false
 * = kill), `autoPauseMemory` (false = keep only the disk), `autoResume:
 * {enabled}`. The node default for an absent `autoPause` is configurable
 * (aenv pauses by default: nothing a user wrote is lost to a timeout).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** A sandbox's lifecycle settings. */
export interface LifecycleSettings {
  /** At TTL expiry. */
  readonly onTimeout: 'pause' | 'kill';
  /** Whether a paused sandbox keeps its memory (else it resumes by booting its disk). */
  readonly keepMemory: boolean;
  /** Whether a proxied request resumes a paused sandbox. */
  readonly autoResume: boolean;
}

function bad(field: string, expected: string): AenvError {
  return new AenvError('API_BODY_INVALID', `field '${field}': expected ${expected}`, {
    fields: { field },
  });
}

function bool(body: Readonly<Record<string, unknown>>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(field, 'true or false');
  return v;
}

function autoResumeOf(value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const enabled = (value as Record<string, unknown>).enabled;
    if (enabled === undefined || typeof enabled === 'boolean') return enabled ?? false;
  }
  throw bad('autoResume', '{"enabled": true|false}');
}

/**
 * Reads the lifecycle fields of a create body.
 * @throws {AenvError} `API_BODY_INVALID` naming the field.
 */
export function parseLifecycle(
  body: Readonly<Record<string, unknown>>,
  defaultOnTimeout: 'pause' | 'kill',
): LifecycleSettings {
  const autoPause = bool(body, 'autoPause');
  const keepMemory = bool(body, 'autoPauseMemory') ?? true;
  const autoResume = autoResumeOf(body.autoResume) ?? false;
  const onTimeout = autoPause === undefined ? defaultOnTimeout : autoPause ? 'pause' : 'kill';
  if (autoResume && onTimeout !== 'pause') {
    throw bad('autoResume', 'false when the sandbox is killed at timeout (autoPause: false)');
  }
  if (autoResume && !keepMemory) {
    throw bad(
      'autoResume',
      'false when autoPauseMemory is false (a disk-only pause resumes by reboot)',
    );
  }
  return { onTimeout, keepMemory, autoResume };
}
