/**
 * Consumer: one simulated watch client. It reads its watch at a paced rate
 * (a token bucket refilled in virtual time; "unlimited" reads whatever is
 * ready at once), stops reading during stall episodes (a TCP stall) or drops
 * the connection (a disconnect), encodes every event it sends on the wire
 * (`event.jsonLine`, encode-once: the encodings counter shows sharing), and
 * re-establishes its watch the way clients do: from the last RV it received,
 * and after a 410 by re-listing and watching from the list RV (informers).
 *
 * It reports to the Recorder: the latency of every delivered event (virtual
 * receipt time minus write time), terminations, and per stall episode the
 * time from the stall's end to the watcher's resync (alpha/beta) and to the
 * client having drained its backlog on a synced watch (any mode).
 */
import type { Clock } from '../core/clock.js';
import type { WatchCache } from '../cache/watch-cache.js';
import type { WatchOptions } from '../cache/request-options.js';
import { asWatcher, type Watcher } from '../watch/watcher.js';
import type { WatchEvent } from '../wire/watch-event.js';
import type { Agenda } from './agenda.js';
import type { LatencyHistogram } from './histogram.js';
import type { Recorder } from './recorder.js';
import { round } from './recorder.js';
import type { EpisodeRecord, TerminationReason } from './result.js';
import type { PopulationSpec, StallEpisode } from './scenario.js';
import type { WriteTimes } from './workload.js';

export interface ConsumerEnv {
  cache: WatchCache;
  clock: Clock;
  agenda: Agenda;
  times: WriteTimes;
  recorder: Recorder;
  tickMs: number;
  /** Watcher id -> its client (the pass observer reports stalls and resyncs through it). */
  clients: Map<number, Consumer>;
  /** True once the run is ending: ended watches are not re-established. */
  stopping(): boolean;
  /** The write rate now (events/s). */
  writeRate(): number;
  recordSequences: boolean;
  /** Clock time of the run's t = 0. */
  origin: number;
}

export interface ConsumerInit {
  id: number;
  population: PopulationSpec;
  selection: Pick<WatchOptions, 'namespace' | 'labelSelector' | 'fieldSelector'>;
  /** Events/s; Infinity = unlimited. */
  readRate: number;
  healthy: boolean;
  /** Request timeout (s) of each watch it opens, when the population has one. */
  timeoutS: () => number | undefined;
  /** Delay (ms) before re-establishing a watch. */
  reconnectDelayMs: () => number;
}

interface Episode {
  record: EpisodeRecord;
  ended: boolean;
}

type Result = IteratorResult<WatchEvent>;

export class Consumer {
  readonly id: number;
  readonly population: PopulationSpec;
  readonly healthy: boolean;
  readonly readRate: number;
  /** Events delivered to this client. */
  delivered = 0;
  worstMs = 0;
  private readonly env: ConsumerEnv;
  private readonly init: ConsumerInit;
  private readonly hist: LatencyHistogram;
  private readonly classHist: LatencyHistogram;
  private readonly burst: number;
  private watcher: Watcher | undefined;
  private waitingOn: Watcher | undefined;
  private wakeScheduled = false;
  private tokens: number;
  private lastRefill: number;
  private stalled = false;
  private held: { w: Watcher; r: Result } | undefined;
  private lastRV: number | undefined;
  private got410 = false;
  private episode: Episode | undefined;
  private sequence: string[] | undefined;
  private connecting = false;

  constructor(env: ConsumerEnv, init: ConsumerInit) {
    this.env = env;
    this.init = init;
    this.id = init.id;
    this.population = init.population;
    this.healthy = init.healthy;
    this.readRate = init.readRate;
    const h = env.recorder.histogramsFor(init.population.name);
    this.hist = init.healthy ? h.healthy : h.slow;
    this.classHist = init.healthy ? env.recorder.healthy : env.recorder.slow;
    this.burst = Math.max(1, (init.readRate * env.tickMs) / 1000);
    this.tokens = this.burst;
    this.lastRefill = env.clock.now();
    if (env.recordSequences) this.sequence = env.recorder.sequence(`${init.population.name}#${init.id}`);
  }

  /** The current watch (undefined between a termination and the reconnect). */
  get current(): Watcher | undefined {
    return this.watcher;
  }

  /** Open the first watch, as the population starts. */
  start(): void {
    if (this.population.start === 'list') void this.list(false);
    else this.open(String(this.env.cache.resourceVersion));
  }

  // ---- episodes (driven by the simulator's agenda) ----

  stallStart(spec: StallEpisode): void {
    this.beginEpisode(spec.kind);
    this.stalled = true;
    if (spec.kind === 'disconnect' && this.watcher !== undefined) {
      const w = this.watcher;
      this.detach();
      w.stop(); // the client closes its connection
    }
  }

  stallEnd(): void {
    this.stalled = false;
    this.endEpisode();
    if (this.watcher === undefined && !this.connecting) this.reconnect(false);
    const held = this.held;
    this.held = undefined;
    if (held !== undefined) this.onResult(held.w, held.r);
    else this.pump();
    this.checkRecovered();
  }

  /** A dispatcher halt began: an episode for every client (it keeps reading). */
  haltStart(): void {
    this.beginEpisode('halt');
  }

  /** The halt ended: from now on, time to resync and to drain the burst. */
  haltEnd(): void {
    this.endEpisode();
    this.checkRecovered();
  }

  private beginEpisode(kind: EpisodeRecord['kind']): void {
    this.finishEpisode();
    const now = this.env.clock.now();
    this.episode = {
      ended: false,
      record: {
        watcher: this.id,
        population: this.population.name,
        kind,
        startMs: now,
        endMs: now,
        readRate: this.readRate === Infinity ? null : round(this.readRate),
        writeRate: 0,
        unsynced: this.watcher?.unsynced === true,
        resyncMs: null,
        recoveryMs: null,
        terminations: 0,
        outcome: 'unfinished',
      },
    };
  }

  private endEpisode(): void {
    const ep = this.episode;
    if (ep === undefined || ep.ended) return;
    ep.ended = true;
    ep.record.endMs = this.env.clock.now();
    ep.record.writeRate = round(this.env.writeRate());
    if (ep.record.unsynced && this.watcher !== undefined && !this.watcher.unsynced && this.watcher.accepting)
      ep.record.resyncMs = 0;
  }

  /** The pass observer: this client's watch went unsynced. */
  onUnsynced(): void {
    const ep = this.episode;
    if (ep !== undefined && ep.record.outcome === 'unfinished') ep.record.unsynced = true;
  }

  /** The pass observer: this client's watch resynced. */
  onResync(): void {
    const ep = this.episode;
    if (
      ep !== undefined &&
      ep.ended &&
      ep.record.unsynced &&
      ep.record.resyncMs === null &&
      ep.record.outcome === 'unfinished'
    ) {
      ep.record.resyncMs = round(this.env.clock.now() - ep.record.endMs);
    }
  }

  /** The run ends: record what is still open. */
  finish(): void {
    this.finishEpisode();
    if (this.delivered > 0)
      (this.healthy ? this.env.recorder.worst.healthy : this.env.recorder.worst.slow).push(this.worstMs);
  }

  // ---- reading ----

  private pump(): void {
    const w = this.watcher;
    if (w === undefined || this.stalled || this.waitingOn === w || this.wakeScheduled) return;
    if (this.readRate !== Infinity) {
      const now = this.env.clock.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefill) * this.readRate) / 1000);
      this.lastRefill = now;
      if (this.tokens < 1) {
        this.wakeScheduled = true;
        this.env.agenda.at(now + ((1 - this.tokens) * 1000) / this.readRate, () => {
          this.wakeScheduled = false;
          this.pump();
        });
        return;
      }
      this.tokens -= 1;
    }
    this.waitingOn = w;
    w.next().then(
      (r) => this.onResult(w, r),
      () => this.onResult(w, { done: true, value: undefined }),
    );
  }

  private onResult(w: Watcher, r: Result): void {
    if (this.waitingOn === w) this.waitingOn = undefined;
    if (w !== this.watcher) return; // a watch this client already closed
    if (this.stalled) {
      this.held = { w, r }; // in the client's socket buffer: read when the stall ends
      return;
    }
    if (r.done === true) {
      this.ended(w);
      return;
    }
    this.receive(r.value);
    this.pump();
    this.checkRecovered();
  }

  private receive(ev: WatchEvent): void {
    const env = this.env;
    ev.jsonLine(env.cache.encodings); // the wire form, encoded once per event and shared
    if (this.sequence !== undefined && ev.type !== 'BOOKMARK') {
      const m = ev.object.metadata;
      this.sequence.push(`${ev.type} ${m.namespace ?? ''}/${m.name ?? ''} ${m.resourceVersion ?? ''}`);
    }
    if (ev.type === 'ERROR') {
      if ((ev.object as unknown as { code?: number }).code === 410) this.got410 = true;
      return;
    }
    this.lastRV = ev.rv;
    if (ev.type === 'BOOKMARK') return;
    const lat = env.clock.now() - env.times.get(ev.rv);
    this.hist.record(lat);
    this.classHist.record(lat);
    if (lat > this.worstMs) this.worstMs = lat;
    this.delivered++;
    env.recorder.deliveries++;
  }

  // ---- connection lifecycle ----

  private open(resourceVersion: string): void {
    const env = this.env;
    this.connecting = false;
    if (env.stopping()) return;
    const o: WatchOptions = { ...this.init.selection, resourceVersion, allowWatchBookmarks: this.population.bookmarks };
    if (this.population.channelCapacity !== undefined) o.channelCapacity = this.population.channelCapacity;
    const t = this.init.timeoutS();
    if (t !== undefined) o.timeoutSeconds = t;
    this.got410 = false;
    let w: Watcher;
    try {
      w = asWatcher(env.cache.watch(o)); // the simulated client reads its watch's sync state
    } catch {
      return; // the cache stopped
    }
    this.watcher = w;
    env.clients.set(w.id, this);
    if (w.unsynced) this.onUnsynced(); // beta: a watch from an old RV starts unsynced (one resync path)
    this.pump();
  }

  private detach(): void {
    const w = this.watcher;
    if (w === undefined) return;
    this.env.clients.delete(w.id);
    this.watcher = undefined;
    this.waitingOn = undefined;
    this.held = undefined;
  }

  private ended(w: Watcher): void {
    const env = this.env;
    this.detach();
    if (env.stopping()) return;
    const reason = classify(w, this.got410);
    if (reason === undefined) return; // closed by this client
    env.recorder.terminated(env.clock.now(), this.id, this.population.name, reason);
    const ep = this.episode;
    if (ep !== undefined && ep.record.outcome === 'unfinished') ep.record.terminations++;
    const relist = this.got410 && this.population.reconnect.relistOn410;
    this.connecting = true;
    const delay = this.init.reconnectDelayMs();
    env.agenda.at(env.clock.now() + delay, () => this.reconnect(relist));
  }

  private reconnect(relist: boolean): void {
    const env = this.env;
    if (env.stopping() || this.watcher !== undefined) {
      this.connecting = false;
      return;
    }
    env.recorder.reconnects++;
    if (relist || this.lastRV === undefined) {
      void this.list(true);
      return;
    }
    this.open(this.population.reconnect.fromLastRV ? String(this.lastRV) : String(env.cache.resourceVersion));
  }

  /** List at RV "0", then watch from the list RV (`again`: a re-list, counted). */
  private async list(again: boolean): Promise<void> {
    const env = this.env;
    this.connecting = true;
    if (again) env.recorder.relists++;
    try {
      const list = await env.cache.list({ resourceVersion: '0', ...this.init.selection });
      this.lastRV = Number(list.metadata.resourceVersion);
      this.open(list.metadata.resourceVersion);
    } catch {
      this.connecting = false; // the cache stopped
    }
  }

  // ---- episodes ----

  private checkRecovered(): void {
    const ep = this.episode;
    const w = this.watcher;
    if (ep === undefined || !ep.ended || ep.record.outcome !== 'unfinished' || this.stalled || w === undefined) return;
    if (!w.accepting || w.unsynced || w.replaying || w.queue.size > 0) return;
    ep.record.recoveryMs = round(this.env.clock.now() - ep.record.endMs);
    ep.record.outcome = 'recovered';
  }

  private finishEpisode(): void {
    const ep = this.episode;
    if (ep === undefined) return;
    this.episode = undefined;
    const rec = ep.record;
    if (rec.outcome === 'unfinished' && rec.terminations > 0) rec.outcome = 'terminated';
    rec.startMs = round(rec.startMs - this.env.origin);
    rec.endMs = round(rec.endMs - this.env.origin);
    this.env.recorder.episodes.push(rec);
  }
}

/** Why a watch ended, from the client's point of view (undefined: the client closed it). */
function classify(w: Watcher, got410: boolean): TerminationReason | undefined {
  switch (w.reason) {
    case 'client':
    case 'cache-stopped':
      return undefined;
    case 'unresponsive':
      return 'unresponsive';
    case 'timeout':
      return 'timeout';
    case 'relist':
      return 'relist';
    case 'expired':
      return w.reachedLive ? 'resource_expired' : 'resource_expired_initial';
    case 'error':
      return got410 ? 'start_expired' : 'other';
    default:
      return 'other';
  }
}
