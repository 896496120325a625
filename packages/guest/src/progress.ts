/**
 * Progress events of the artifact build, for the daemon to show ("preparing
 * guest kernel 40 %"). A stage reports `start`, any number of `progress`,
 * then `done`; or just `cached` when its artifact already exists.
 *
 * @module
 */

/** The artifact build stages, in the order they run. */
export const GUEST_STAGES = [
  'kernel',
  'initramfs',
  'init',
  'node-runtime',
  'tools-image',
  'base-image',
] as const;

/** One of {@link GUEST_STAGES}. */
export type GuestStage = (typeof GUEST_STAGES)[number];

/** One progress event. */
export interface GuestProgressEvent {
  readonly stage: GuestStage;
  readonly status: 'cached' | 'start' | 'progress' | 'done';
  /** Completion of the stage, 0..100, when known. */
  readonly percent?: number;
  /** Bytes done and expected, for downloads. */
  readonly bytes?: number;
  readonly totalBytes?: number;
  /** What is happening, one line (e.g. `debootstrap: Unpacking python3`). */
  readonly message?: string;
  /** With `done`: how long the stage took. */
  readonly durationMs?: number;
}

/** Receives progress events. */
export type ProgressListener = (event: GuestProgressEvent) => void;

/** A listener bound to one stage. */
export interface StageProgress {
  (update: Omit<GuestProgressEvent, 'stage' | 'status'>): void;
}

/** Binds `listener` to `stage` for `progress` events, rounding percents. */
export function stageProgress(
  stage: GuestStage,
  listener: ProgressListener | undefined,
): StageProgress {
  return (update) => {
    if (listener === undefined) return;
    const percent =
      update.percent === undefined
        ? undefined
        : Math.max(0, Math.min(100, Math.round(update.percent)));
    listener({
      stage,
      status: 'progress',
      ...update,
      ...(percent === undefined ? {} : { percent }),
    });
  };
}

/** One human-readable line for a progress event (`[kernel] progress  60% unpacking ...`). */
export function formatProgress(e: GuestProgressEvent): string {
  const pct = e.percent === undefined ? '' : ` ${String(e.percent).padStart(3)}%`;
  const took = e.durationMs === undefined ? '' : ` (${(e.durationMs / 1000).toFixed(1)} s)`;
  return `[${e.stage}] ${e.status}${pct}${e.message === undefined ? '' : ` ${e.message}`}${took}`;
}
