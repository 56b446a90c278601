// Time as a dependency: the service reads "now" from a Clock so tests can move it without sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved (tests, the seeder). */
export function manualClock(start: Date | string = '2026-11-22T09:30:00.000Z') {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set: (at: Date | string) => void (current = new Date(at).getTime()),
    advance: (ms: number) => void (current += ms),
  };
}
