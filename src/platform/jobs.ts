// A periodic job of this process: `run` every intervalMs (and once at start when runAtStart), never two
// runs at once, a failure logged and the next run tried on time; stop() waits for a run in progress.
// Each process runs its own: a job that must act once across processes takes a lock or claims its rows
// (the grievance reminders and overdue events do; the idempotency purge deletes with skip locked).
export interface IntervalJob {
  start(): void;
  stop(): Promise<void>;
}

export function createIntervalJob(options: {
  /** For the log line of a failed run: "<name> failed". */
  name: string;
  run: () => Promise<unknown>;
  intervalMs: number;
  log: { error(o: object, m: string): void };
  runAtStart?: boolean;
}): IntervalJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = options
      .run()
      .catch((err) => options.log.error({ err }, `${options.name} failed`))
      .finally(() => (running = undefined));
  };
  return {
    start() {
      if (timer) return;
      if (options.runAtStart) tick();
      timer = setInterval(tick, options.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
