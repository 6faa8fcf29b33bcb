/**
 * Engine figures next to the floor that bounds them (same run, same
 * machine), as a ratio engine / floor. The floor value is the median of the
 * floor task (per-call median divided by the operations per call), the
 * engine value is the figure as measured. A pair whose inputs are missing
 * (a suite not run, a row that failed) is left out.
 */
import type { BenchReport, FloorRow, KepRow, RatioRow, ThroughputRow } from '../lib/types.js';

function floorOf(rows: FloorRow[], prefix: string): FloorRow | undefined {
  return rows.find((r) => r.name.startsWith(prefix));
}

/** Floor median in microseconds. */
function floorUs(r: FloorRow): number {
  return r.unit === 'us/op' ? r.p50 : r.p50 / 1000;
}

function tp(
  rows: ThroughputRow[],
  scenario: ThroughputRow['scenario'],
  mode: ThroughputRow['mode'],
): ThroughputRow | undefined {
  return rows.find((r) => r.scenario === scenario && r.mode === mode && r.events > 0);
}

/** The stalled-variant row with the largest N for a mode. */
function biggestKep(rows: KepRow[], mode: KepRow['mode']): KepRow | undefined {
  return rows
    .filter((r) => r.mode === mode && r.variant === 'stalled' && r.slow > 0)
    .sort((a, b) => b.slow - a.slow)[0];
}

/** The row of a mode where catch-up did the most work by `key` (any variant). */
function busiestKep(rows: KepRow[], mode: KepRow['mode'], key: (r: KepRow) => number): KepRow | undefined {
  return rows.filter((r) => r.mode === mode && key(r) > 0).sort((a, b) => key(b) - key(a))[0];
}

export function computeRatios(report: BenchReport): RatioRow[] {
  const out: RatioRow[] = [];
  const f = report.floor;
  const add = (
    figure: string,
    engine: number,
    engineUnit: string,
    floor: FloorRow | undefined,
    floorValue: number | undefined,
    note: string,
  ): void => {
    if (floor === undefined || floorValue === undefined || !(engine > 0) || !(floorValue > 0)) return;
    out.push({
      figure,
      engine,
      engineUnit,
      floorName: floor.name,
      floor: floorValue,
      ratio: engine / floorValue,
      note,
    });
  };

  const hop = floorOf(f, 'microtask hop');
  for (const mode of report.meta.modes) {
    const k0 = report.kep.find((r) => r.mode === mode && r.slow === 0);
    if (k0 !== undefined && hop !== undefined) {
      add(
        `healthy delivery p50, no slow watchers, ${k0.modeLabel}`,
        k0.latencyStall.p50Us,
        'µs',
        hop,
        floorUs(hop),
        'write -> receipt in-process (store write, reflector, history, dispatch, consumer) vs one promise hop',
      );
    }
    const k = biggestKep(report.kep, mode);
    if (k !== undefined && k0 !== undefined && k0.latencyStall.p99Us > 0) {
      out.push({
        figure: `healthy delivery p99, ${k.slow} stalled, ${k.modeLabel}`,
        engine: k.latencyStall.p99Us,
        engineUnit: 'µs',
        floorName: 'baseline: same mode, no slow watchers (not a floor)',
        floor: k0.latencyStall.p99Us,
        ratio: k.latencyStall.p99Us / k0.latencyStall.p99Us,
        note: 'KEP measurement 1: 1x = unchanged by the stalled watchers',
      });
    }
  }
  const jsonLine = floorOf(f, 'jsonLine form');
  const eventQ = floorOf(f, 'EventQueue push+shift');
  const fan100k = floorOf(f, 'fan-out: one ref into 100,000 EventQueues');
  const spscFan = f
    .filter((r) => r.name.startsWith('fan-out: one ref into') && r.name.includes('SpscChannels'))
    .sort((a, b) => b.opsPerSec - a.opsPerSec)
    .pop();
  const packEvent = floorOf(f, 'msgpackr pack event');
  const packSuite = floorOf(f, "msgpackr pack the suite's update");
  const mirrorSuite = floorOf(f, 'ring mirror: RingMirror.appended per suite update');
  const ringAppend = floorOf(f, 'ring append+publish');
  const ringRead = floorOf(f, 'ring read (copy');
  const unpack = floorOf(f, 'msgpackr unpack');
  for (const mode of report.meta.modes) {
    const t1 = tp(report.throughput, 'trigger-1k', mode);
    if (t1 !== undefined && jsonLine !== undefined)
      add(
        `encode per event (jsonLine), trigger-1k, ${t1.modeLabel}`,
        t1.encodeUsPerEvent,
        'µs',
        jsonLine,
        floorUs(jsonLine),
        'encode once: one JSON encoding per event',
      );
    if (t1 !== undefined && jsonLine !== undefined && eventQ !== undefined && hop !== undefined) {
      const sum = floorUs(jsonLine) + floorUs(eventQ) + floorUs(hop);
      out.push({
        figure: `main-thread time per event, trigger-1k, ${t1.modeLabel}`,
        engine: t1.totalUsPerEvent,
        engineUnit: 'µs',
        floorName: 'jsonLine encode + 1 channel push/pop + 1 promise hop',
        floor: sum,
        ratio: t1.totalUsPerEvent / sum,
        note: 'includes the MemoryStore write and the consumer loop',
      });
    }
    const t2 = tp(report.throughput, 'all-100k', mode);
    if (t2 !== undefined) {
      const fl = mode === 'beta' ? spscFan : fan100k;
      if (fl !== undefined)
        add(
          `fan-out per push, ${t2.watchers} watchers, ${t2.modeLabel}`,
          t2.fanoutNsPerPush / 1000,
          'µs',
          fl,
          floorUs(fl),
          'live dispatch incl. waking the consumer of each push',
        );
    }
    if (mode === 'beta' && t1 !== undefined && packEvent !== undefined && ringAppend !== undefined) {
      const sum = floorUs(packEvent) + floorUs(ringAppend);
      out.push({
        figure: `ring mirror per event (msgpack + append + publish), ${t1.modeLabel}`,
        engine: t1.ringUsPerEvent,
        engineUnit: 'µs',
        floorName: 'msgpackr pack event + ring append+publish',
        floor: sum,
        ratio: t1.ringUsPerEvent / sum,
        note: 'beta encodes the event once into the ring (the previous object is a reference)',
      });
      if (packSuite !== undefined) {
        const suite = floorUs(packSuite) + floorUs(ringAppend);
        out.push({
          figure: `ring mirror per event (msgpack + append + publish), ${t1.modeLabel}, vs its own objects`,
          engine: t1.ringUsPerEvent,
          engineUnit: 'µs',
          floorName:
            'msgpackr pack of the suite’s own updates, as the mirror meets them (median) + ring append+publish',
          floor: suite,
          ratio: t1.ringUsPerEvent / suite,
          note: 'the same objects, just JSON-encoded, packed into a reused buffer: what the mirror adds to packing them',
        });
      }
    }
    // The mirror and its pack measured in one process, in alternating batches on the same objects: the ratio
    // does not move with this host's speed, which the engine and floor figures above come from different runs of.
    if (mode === 'beta' && mirrorSuite !== undefined && packSuite !== undefined) {
      add(
        'ring mirror per event (RingMirror.appended), the suite’s updates, vs its own pack in the same process',
        floorUs(mirrorSuite),
        'µs',
        packSuite,
        floorUs(packSuite),
        'issue 13 goal ≤ 1.2x: the one encode plus everything the mirror does around it, against that encode alone',
      );
    }
  }
  // The live dispatch while the channels fill (issue 13, deliverable 1) against the live push alone, both
  // into 10,000 channels: what the dispatch adds per watcher (routing, position, selection, the watcher).
  for (const d of report.liveDispatch ?? []) {
    const fl = floorOf(
      f,
      d.mode === 'beta'
        ? 'live push: one event into 10,000 SharedWatcherChannels'
        : 'live push: one event into 10,000 EventQueues',
    );
    if (fl !== undefined)
      add(
        `live dispatch while channels fill, ${d.watchers.toLocaleString('en-US')} match-all watchers, ${d.mode}`,
        d.nsPerWatcher,
        'ns / watcher',
        fl,
        fl.p50,
        'one event offered to every watcher: route, position, selection, push, wake check; a KEP mass stall pays it for its first ~capacity events',
      );
  }
  const ka = busiestKep(report.kep, 'alpha', (r) => r.passPushes);
  if (ka !== undefined && eventQ !== undefined) {
    add(
      `alpha pass time per catch-up push (${ka.variant}, N=${ka.slow}, busiest run)`,
      (ka.passWorkMs * 1000) / ka.passPushes,
      'µs',
      eventQ,
      floorUs(eventQ),
      'main-thread pass time / pushes: candidate order over every unsynced watcher, scan, selection, push',
    );
  }
  const kb = busiestKep(report.kep, 'beta', (r) => r.scanned);
  if (kb !== undefined && kb.scannedPerPassMs > 0 && ringRead !== undefined && unpack !== undefined) {
    const sum = floorUs(ringRead) + floorUs(unpack);
    const engineUs = 1000 / kb.scannedPerPassMs;
    out.push({
      figure: `beta worker time per scanned event (${kb.variant}, N=${kb.slow}, busiest run)`,
      engine: engineUs,
      engineUnit: 'µs',
      floorName: 'ring read (copy out) + msgpackr unpack',
      floor: sum,
      ratio: engineUs / sum,
      note: 'worker pass time / events decoded: includes per-member work of every pass and the pushes',
    });
  }
  const etcd = report.peers.etcd;
  for (const d of etcd.filter((r) => r.system.startsWith('etcd direct'))) {
    const e = etcd.find((r) => r.watchers === d.watchers && r.system.startsWith('engine'));
    if (e !== undefined && d.latency.p50Us > 0) {
      out.push({
        figure: `delivery p50, W=${d.watchers}, engine over etcd`,
        engine: e.latency.p50Us / 1000,
        engineUnit: 'ms',
        floorName: 'peer: etcd direct, same workload',
        floor: d.latency.p50Us / 1000,
        ratio: e.latency.p50Us / d.latency.p50Us,
        note: 'a peer, not a floor: below 1 = faster than etcd direct',
      });
    }
  }
  return out;
}
