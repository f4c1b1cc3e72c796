// Flights that overlap (docs/cluster.md): over a slow link, a batch of row bodies whose COMMIT
// went in its flight frees the driver's queue before its answer is back, and the next batch's
// BEGIN reaches the server behind that COMMIT (a connection's statements run in the order sent).
// This module keeps what the driver (driver.ts) decides that by: how long the flights took to
// answer, and which freed ones are still on their way.
import { mark, TRACING } from "../../trace.ts";

/**
 * Flights free the queue only when each of the last FLIGHTS_MEASURED took at least this long to
 * answer: a round trip over a network, not loopback's tens of µs, where smaller batches would
 * only cost more CPU a call.
 */
export const OVERLAP_FROM_MS = 1;
const FLIGHTS_MEASURED = 32;
/** At most this many freed flights unanswered: a batch sent past them holds the queue until its answer. */
const FLYING_MOST = 3;

export class Flights {
  /** Batches whose flight freed the queue, until their answers and hooks are done. */
  private readonly flying = new Set<Promise<void>>();
  /** How long the last FLIGHTS_MEASURED flights with their COMMIT took to answer, in ms. */
  private readonly ms: number[] = [];

  /** When every flight that freed the queue has its answer and its hooks done. */
  async landed(): Promise<void> {
    while (this.flying.size > 0) await Promise.all(this.flying);
  }

  /**
   * A batch in its turn on the queue, `run(free)`: the queue moves on when it ends, or when it
   * calls `free` (its flight, COMMIT included, sent: Flight.flown), while it stays among the
   * flights on their way.
   */
  chained(run: (free: () => void) => Promise<void>): Promise<void> {
    let free!: () => void;
    const freed = new Promise<void>((resolve) => (free = resolve));
    const whole: Promise<void> = run(() => {
      this.flying.add(whole);
      const drop = () => {
        this.flying.delete(whole);
        if (TRACING) mark("flight landed");
      };
      whole.then(drop, drop);
      free();
    });
    return Promise.race([whole, freed]);
  }

  /**
   * While a freed flight is on its way (a slow link), a batch about to start with one call
   * gathers first, for the shortest pause Bun's timers make (about 1 ms): the calls a flight's
   * answers released come back together, and without it the first of them would go alone and
   * the rest wait for the next. A batch that already holds several goes at once. Undefined:
   * start now (no flight freed is on its way: loopback, or a quiet link; or calls enough).
   */
  gathering(calls: number): Promise<void> | undefined {
    return this.flying.size > 0 && calls <= 1 ? new Promise((resolve) => setTimeout(resolve, 0)) : undefined;
  }

  /** Whether a flight sent now may free the queue before its answer. */
  get open(): boolean {
    return this.flying.size < FLYING_MOST && this.ms.length >= FLIGHTS_MEASURED && Math.min(...this.ms) >= OVERLAP_FROM_MS;
  }

  measured(ms: number): void {
    this.ms.push(ms);
    if (this.ms.length > FLIGHTS_MEASURED) this.ms.shift();
  }
}

/** One batch's flight with its COMMIT, as the driver runs it: when it was sent, and whether it freed the queue. */
export class Flight {
  private sentAt = -1;
  freed = false;

  constructor(
    private readonly flights: Flights,
    /** From Flights.chained; none for a batch not run from the queue (a catch-up of its own, a batch run again). */
    private readonly free: (() => void) | undefined,
  ) {}

  /** Its flight is on its way (statement.ts, execLast): it frees the queue if flights are slow. */
  readonly flown = (): void => {
    this.sentAt = performance.now();
    if (!this.free || !this.flights.open) return;
    if (TRACING) mark("flight overlaps");
    this.freed = true;
    this.free();
  };

  /** Its COMMIT answered: how long the flight took counts for the next ones. */
  answered(): void {
    if (this.sentAt >= 0) this.flights.measured(performance.now() - this.sentAt);
  }
}
