/**
 * The pod row of kube-apiserver's Table (pkg/printers/internalversion
 * printPod): NAME, READY (ready/total containers), STATUS (the phase, or the
 * reason of the first init container or last container that is not running,
 * Terminating while deleted), RESTARTS (with the age of the last restart),
 * AGE; and the wide columns IP, NODE, NOMINATED NODE, READINESS GATES.
 */
import type { KubeObject } from '../../core/types.js';
import { ageSince } from './human-duration.js';
import type { ColumnDefinition } from './table-columns.js';

export const POD_COLUMNS: readonly ColumnDefinition[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
  {
    name: 'Ready',
    type: 'string',
    format: '',
    description: 'The aggregate readiness state of this pod for accepting traffic.',
    priority: 0,
  },
  {
    name: 'Status',
    type: 'string',
    format: '',
    description: 'The aggregate status of the containers in this pod.',
    priority: 0,
  },
  {
    name: 'Restarts',
    type: 'string',
    format: '',
    description:
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    priority: 0,
  },
  {
    name: 'Age',
    type: 'string',
    format: '',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
    priority: 0,
  },
  {
    name: 'IP',
    type: 'string',
    format: '',
    description: 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
    priority: 1,
  },
  {
    name: 'Node',
    type: 'string',
    format: '',
    description: 'NodeName is a request to schedule this pod onto a specific node.',
    priority: 1,
  },
  {
    name: 'Nominated Node',
    type: 'string',
    format: '',
    description: 'nominatedNodeName is set only when this pod preempts other pods on the node.',
    priority: 1,
  },
  {
    name: 'Readiness Gates',
    type: 'string',
    format: '',
    description: 'If specified, all readiness gates will be evaluated for pod readiness.',
    priority: 1,
  },
];

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {});
const list = (v: unknown): Rec[] => (Array.isArray(v) ? v.map(rec) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function terminatedReason(t: Rec, prefix: string): string {
  if (str(t.reason) !== '') return prefix + str(t.reason);
  return num(t.signal) !== 0 ? `${prefix}Signal:${num(t.signal)}` : `${prefix}ExitCode:${num(t.exitCode)}`;
}

export function podCells(pod: KubeObject, nowMs: number): unknown[] {
  const spec = rec(pod.spec);
  const status = rec(pod.status);
  const containers = list(spec.containers);
  const initContainers = list(spec.initContainers);
  let restarts = 0;
  let lastRestart = 0;
  let ready = 0;
  let reason = str(status.reason) !== '' ? str(status.reason) : str(status.phase);
  const noteRestart = (cs: Rec): void => {
    restarts += num(cs.restartCount);
    const finished = Date.parse(str(rec(rec(cs.lastState).terminated).finishedAt));
    if (!Number.isNaN(finished) && finished > lastRestart) lastRestart = finished;
  };

  let initializing = false;
  const initStatuses = list(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i]!;
    noteRestart(cs);
    const state = rec(cs.state);
    const terminated = state.terminated === undefined ? undefined : rec(state.terminated);
    const waiting = state.waiting === undefined ? undefined : rec(state.waiting);
    if (terminated !== undefined && num(terminated.exitCode) === 0) continue;
    if (terminated !== undefined) reason = terminatedReason(terminated, 'Init:');
    else if (waiting !== undefined && str(waiting.reason) !== '' && str(waiting.reason) !== 'PodInitializing')
      reason = 'Init:' + str(waiting.reason);
    else reason = `Init:${i}/${initContainers.length}`;
    initializing = true;
    break;
  }
  if (!initializing) {
    restarts = 0;
    lastRestart = 0;
    let hasRunning = false;
    const statuses = list(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]!;
      noteRestart(cs);
      const state = rec(cs.state);
      const waiting = state.waiting === undefined ? undefined : rec(state.waiting);
      const terminated = state.terminated === undefined ? undefined : rec(state.terminated);
      if (waiting !== undefined && str(waiting.reason) !== '') reason = str(waiting.reason);
      else if (terminated !== undefined) reason = terminatedReason(terminated, '');
      else if (cs.ready === true && state.running !== undefined) {
        hasRunning = true;
        ready++;
      }
    }
    // A pod that completed but still has a running container is Running (or NotReady).
    if (reason === 'Completed' && hasRunning) {
      const readyCondition = list(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True');
      reason = readyCondition ? 'Running' : 'NotReady';
    }
  }
  const meta = pod.metadata;
  if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null)
    reason = str(status.reason) === 'NodeLost' ? 'Unknown' : 'Terminating';

  const restartsCell =
    lastRestart > 0 ? `${restarts} (${ageSince(new Date(lastRestart).toISOString(), nowMs)} ago)` : String(restarts);
  const podIPs = list(status.podIPs);
  const ip = str(podIPs[0]?.ip) !== '' ? str(podIPs[0]!.ip) : str(status.podIP);
  const gates = list(spec.readinessGates);
  let readinessGates = '<none>';
  if (gates.length > 0) {
    const conditions = list(status.conditions);
    const trueCount = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
    readinessGates = `${trueCount}/${gates.length}`;
  }
  const orNone = (s: string): string => (s === '' ? '<none>' : s);
  return [
    meta.name ?? '',
    `${ready}/${containers.length}`,
    reason,
    restartsCell,
    ageSince(meta.creationTimestamp, nowMs),
    orNone(ip),
    orNone(str(spec.nodeName)),
    orNone(str(status.nominatedNodeName)),
    readinessGates,
  ];
}
