/**
 * Watcher populations: turns each PopulationSpec into simulated clients
 * (their selection, read rate, latency class, timeouts, reconnect delays)
 * and puts their connects and stall episodes on the agenda.
 */
import type { WatchOptions } from '../cache/request-options.js';
import { Consumer, type ConsumerEnv } from './consumer.js';
import { sample } from './distribution.js';
import type { Prng } from './prng.js';
import type { PopulationSpec, Scenario } from './scenario.js';
import { labelValue, namespaceName, nodeName, TRIGGER_FIELD, type Workload } from './workload.js';

/** What watcher `i` of a population selects. */
function selectionFor(
  p: PopulationSpec,
  i: number,
  scenario: Scenario,
  workload: Workload,
): Pick<WatchOptions, 'namespace' | 'labelSelector' | 'fieldSelector'> {
  const w = scenario.writes;
  switch (p.selector.kind) {
    case 'all':
      return {};
    case 'namespace':
      return { namespace: namespaceName(i % w.namespaces.count) };
    case 'label': {
      const spec = w.labels.find((l) => l.key === p.selector.labelKey) ?? w.labels[0]!;
      return { labelSelector: `${spec.key}=${labelValue(i % spec.count)}` };
    }
    case 'trigger':
      return { fieldSelector: `${TRIGGER_FIELD}=${nodeName(i % (w.triggerValues?.count ?? 1))}` };
    case 'name': {
      const o = workload.objectAt(i) ?? { namespace: namespaceName(0), name: 'o-0' };
      return { namespace: o.namespace, fieldSelector: `metadata.name=${o.name}` };
    }
  }
}

/** Build every client of the scenario and schedule its connect and episodes. */
export function buildPopulations(scenario: Scenario, env: ConsumerEnv, workload: Workload, r: Prng): Consumer[] {
  const all: Consumer[] = [];
  const origin = env.origin;
  let id = 0;
  for (const p of scenario.watchers) {
    const members: Consumer[] = [];
    // Which members take part in each episode: a seeded choice of round(fraction * count).
    const inEpisode = p.stalls.map(
      (ep) => new Set(r.shuffled([...Array(p.count).keys()]).slice(0, Math.round(ep.fraction * p.count))),
    );
    for (let i = 0; i < p.count; i++) {
      const readRate = sample(p.readRate, r);
      const episodic = inEpisode.some((s) => s.has(i));
      const healthy = p.latencyClass !== undefined ? p.latencyClass === 'healthy' : readRate === Infinity && !episodic;
      const timeout = p.timeoutS;
      const c = new Consumer(env, {
        id: id++,
        population: p,
        selection: selectionFor(p, i, scenario, workload),
        readRate,
        healthy,
        timeoutS: timeout === undefined ? () => undefined : () => Math.max(1, Math.round(sample(timeout, r))),
        reconnectDelayMs: () => sample(p.reconnect.delayMs, r),
      });
      members.push(c);
      all.push(c);
      const startAt = origin + 1000 * (p.startAtS + (p.startSpreadS * i) / p.count);
      env.agenda.at(startAt, () => c.start());
    }
    p.stalls.forEach((ep, k) => {
      const chosen = [...inEpisode[k]!].sort((a, b) => a - b);
      chosen.forEach((i, rank) => {
        const c = members[i]!;
        const group = Math.floor((rank * ep.groups) / chosen.length);
        const at = ep.atS + group * ep.staggerS;
        env.agenda.at(origin + 1000 * at, () => c.stallStart(ep));
        env.agenda.at(origin + 1000 * (at + ep.forS), () => c.stallEnd());
      });
    });
  }
  return all;
}
