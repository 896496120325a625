/**
 * Measuring what a guest does while it is paused, from the host: the
 * counter and the guest clock are read just before a pause and just after
 * the resume, and again after an equally long window in which the guest
 * runs (to calibrate how fast the counter counts and that the clock runs).
 *
 * Host-side bounds: the guest can have run at most `runningMaxMs` between
 * the two readings (from the start of the first reading to the pause, and
 * from the resume to the end of the second); everything beyond that was the
 * pause, `pausedMs`. A guest that kept running through the pause would show
 * about `runningMaxMs + pausedMs` of progress.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  READ_COUNTER_AND_CLOCK,
  parseCounterReading,
  type CounterReading,
} from './guest-programs.js';
import type { SuiteVm } from './suite-vm.js';

/** One measured pause. */
export interface PauseWindow {
  readonly before: CounterReading;
  readonly after: CounterReading;
  /** A reading `pausedMs` after `after`, the guest running all along. */
  readonly later: CounterReading;
  /** Most time the guest can have run between `before` and `after`. */
  readonly runningMaxMs: number;
  /** How long the VM was paused. */
  readonly pausedMs: number;
  /** Host time between `after` and `later` (an upper bound of the guest's). */
  readonly laterMaxMs: number;
  /** Whether envd answered while the VM was paused (it must not). */
  readonly answeredWhilePaused: boolean;
}

/** Pauses `v` for `pauseMs` between two readings, then lets it run as long again. */
export async function measurePause(v: SuiteVm, pauseMs: number): Promise<PauseWindow> {
  const read = async (): Promise<CounterReading> =>
    parseCounterReading(await v.sh(READ_COUNTER_AND_CLOCK));
  const start = performance.now();
  const before = await read();
  await v.vm.pause();
  const pausedAt = performance.now();
  const answeredWhilePaused = await v.envdAnswers(Math.min(500, pauseMs / 2));
  await sleep(Math.max(0, pauseMs - (performance.now() - pausedAt)));
  const resumeAt = performance.now();
  await v.vm.resume();
  const after = await read();
  const afterAt = performance.now();
  await sleep(pauseMs);
  const later = await read();
  return {
    before,
    after,
    later,
    runningMaxMs: pausedAt - start + (afterAt - resumeAt),
    pausedMs: resumeAt - pausedAt,
    laterMaxMs: performance.now() - resumeAt,
    answeredWhilePaused,
  };
}

/** Counter increments per ms of guest time while running, from the calibration window. */
export function counterRate(w: PauseWindow): number {
  const guestMs = w.later.uptimeMs - w.after.uptimeMs;
  return guestMs <= 0 ? 0 : (w.later.count - w.after.count) / guestMs;
}
