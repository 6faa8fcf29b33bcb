/**
 * ConsumerWindow: how much the sync worker keeps queued at once for the
 * consumers that read on the main thread (pass option `consumerWindow`, in
 * events).
 *
 * Why: every event the worker pushes into a channel consumed on the main
 * thread costs that thread a read, and the worker pushes at its own pace.
 * With 10,000 watchers resuming after a mass stall it filled their channels
 * (up to CAPACITY × RUN_MAX events each) faster than the main thread could
 * read them, and the main thread's other work, the ingest of new events,
 * fell a second behind (issue 13: the KEP bench's writer lag). Alpha's
 * passes are bounded by their budgets on the thread that reads; the worker's
 * pushes were not.
 *
 * Steps:
 *  1. measure(): before each pass, and while it is shut each time the worker
 *     looks for room (WorkerPassHost.anyMemberHasRoom), count the events
 *     queued in the channels of the *reading* local members:
 *     consumed on the main thread (a pooled region, not a watch port), and
 *     read from (their HEAD moved) or fed (a publication) within READING_MS.
 *     The window is shut when that reaches the limit, and opens again once
 *     it is down to half of it.
 *  2. take(): each event a pass pushes to a local member counts against what
 *     is left; at the limit it shuts.
 *  3. While it is shut a local member reports no room (WorkerMember.free):
 *     the pass skips it, or refuses its next event (Offer.Full: it keeps its
 *     position and is owed the rest), and the worker parks for room. A
 *     consumer's pop that publishes HEAD signals room (ControlBlock
 *     .signalRoom); the worker measures again. (Polling every millisecond
 *     instead, which spares the consumers those notifies, made the W = 1,000
 *     catch-up ~25 % slower still: the refill came up to a poll late.)
 *
 * Events, not slots: what the main thread pays is a read per event, and a
 * slot holds 1 to RUN_MAX of them (SpscChannel "Run slots"). The worker sees
 * a channel's queued slots (HEAD to TAIL); it counts them at the events per
 * slot of its own pushes to that member (queuedEvents).
 *
 * INVARIANT (liveness): only reading consumers count. A consumer that read
 * nothing for READING_MS costs the main thread nothing now, so its queued
 * events leave the window: a stalled consumer never shuts it for the others,
 * and a worker parked behind a shut window re-measures at least every
 * READING_MS (SyncWorkerEndpoint.serveRoom), so consumers that were fed but
 * never read cannot keep it shut. (Out of the window a stalled consumer is
 * fed like any member with room, and each feed counts it for READING_MS
 * again: it holds the window at most until its channel is full.)
 */

/** A member as the window sees it (WorkerMember). */
export interface WindowMember {
  /** Consumed on the main thread (a pooled channel region): the window bounds it. */
  readonly local: boolean;
  /** Its channel's events queued now, as far as the producer sees (its slots, HEAD to TAIL, at its events per slot). */
  readonly queuedEvents: number;
  /** Its channel's consumer HEAD word: moves when the consumer publishes what it read. */
  readonly consumerHead: number;
  /** The HEAD word the last measure saw (WorkerMember: its consumer's HEAD when adopted). */
  headSeen: number;
  /** When it last read or was fed (the worker's clock, ms). */
  activeAt: number;
}

/**
 * How long after its last read or feed a consumer still counts as reading.
 * Longer than an event-loop turn of a loaded main thread (the KEP bench's
 * resume at 10,000 watchers: ~25 ms), so a consumer that reads once a turn
 * stays in; short enough that a stalled one frees its share within a pass or two.
 */
export const READING_MS = 100;

export class ConsumerWindow {
  /** The most events queued for reading local consumers (0: no bound). */
  readonly limit: number;
  /** Events the current pass may still push before the window shuts. */
  private left = Infinity;
  /** At the limit: local members report no room and get no more events. */
  shut = false;

  constructor(limit: number) {
    this.limit = limit > 0 ? limit : 0;
  }

  /** Step 1: count the reading local members' queued events at `now`; shut at the limit. */
  measure(members: Iterable<WindowMember>, now: number): void {
    if (this.limit === 0) return;
    let queued = 0;
    for (const m of members) {
      if (!m.local) continue;
      const head = m.consumerHead;
      if (head !== m.headSeen) {
        m.headSeen = head;
        m.activeAt = now;
      }
      // INVARIANT (liveness): a consumer idle for READING_MS is not counted (module doc).
      if (now - m.activeAt > READING_MS) continue;
      queued += m.queuedEvents;
    }
    this.left = this.limit - queued;
    // Shut at the limit; once shut, open again only at half of it (the low-water mark), so that the pass it
    // lets run has half a window of pushes before the next one: not a pass per consumer's read.
    this.shut = this.shut ? queued * 2 > this.limit : this.left <= 0;
  }

  /** Step 2: a pass pushed an event to a local member. */
  take(): void {
    if (this.limit === 0) return;
    if (--this.left <= 0) this.shut = true;
  }
}
