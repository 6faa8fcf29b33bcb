/**
 * The checker: every session against the linearized write history.
 *
 * Rules (each a violation name):
 *  - prefix: the data events received are exactly a prefix of what the model
 *    says the session must receive (the selected events after the start RV,
 *    or the initial state then the live events), each once, in RV order, with
 *    the right type, including selector transitions;
 *  - complete: a session still open and read to the end got all of it; in
 *    alpha and beta a session never ends for a full channel (only by 410,
 *    its client, or its timeout);
 *  - bookmark: only with allowWatchBookmarks; never below the last received
 *    RV; everything selected at or below it was received before it;
 *  - error: an ERROR is the last event; a 410 only when the start RV (or the
 *    position) was older than the history could serve at that moment.
 */
import type { Mode } from '../../src/index.js';
import { type Expected, type WriteHistory } from './model.js';
import type { Received, SessionRecord, Violation } from './session.js';

export interface CheckContext {
  mode: Mode;
  history: WriteHistory;
  /** Every oldest-servable RV the history had at any step. */
  observedOldest: Set<number>;
}

function describe(e: Expected | Received | undefined): string {
  return e === undefined ? 'nothing' : `${e.type} ${e.key} rv=${e.rv}`;
}

export function checkSession(s: SessionRecord, ctx: CheckContext): Violation[] {
  const v: Violation[] = [];
  const fail = (rule: string, detail: string): void => void v.push({ session: s, rule, detail });
  const o = s.options;
  const sel = ctx.history.selection({
    namespace: o.namespace,
    labelSelector: o.labelSelector,
    fieldSelector: o.fieldSelector,
  });
  const data = s.received.filter((r) => r.type === 'ADDED' || r.type === 'MODIFIED' || r.type === 'DELETED');
  const errors = s.received.filter((r) => r.type === 'ERROR');
  if (errors.length > 1 || (errors.length === 1 && s.received[s.received.length - 1]!.type !== 'ERROR'))
    fail('error', 'an ERROR event is not the last event');
  const err = errors[0];

  // ---- the start: which expected stream applies ----
  const rvOpt = o.resourceVersion ?? '';
  const stateStart =
    o.sendInitialEvents === true || (o.sendInitialEvents === undefined && (rvOpt === '' || rvOpt === '0'));
  let expected: Expected[] | undefined;
  if (err !== undefined && data.length === 0 && err.code === 410 && !stateStart && s.received.length === 1) {
    // A 410 with nothing before it: at the start (the start RV predates the history then) or
    // an expiry before anything was delivered (checked below like any in-flight 410).
    const n = Number(rvOpt);
    const oldest = s.boundsAtStart.oldest;
    const m = /too old resource version: (\d+) \((\d+)\)/.exec(err.message ?? '');
    const atStart = m !== null && oldest !== undefined && Number(m[2]) === oldest - 1 && n < oldest - 1;
    if (atStart) return v;
  }
  if (stateStart) {
    const initEnd = s.received.findIndex((r) => r.initialEnd === true);
    let candidates: number[];
    if (initEnd >= 0) candidates = [s.received[initEnd]!.rv];
    else if (rvOpt === '0') candidates = [s.cacheRVAtStart];
    else {
      candidates = [];
      for (let x = s.floorRV; x <= ctx.history.lastRV; x++) candidates.push(x);
    }
    let best: Expected[] | undefined;
    let bestLen = -1;
    for (const c of candidates) {
      const exp = [...ctx.history.initialAt(c, sel), ...ctx.history.liveAfter(c, sel)];
      const n = matchLength(data, exp);
      if (n === data.length) {
        // Several snapshot RVs can explain a prefix; prefer one that explains the whole session.
        if (expected === undefined || exp.length === data.length) expected = exp;
        if (exp.length === data.length) break;
        continue;
      }
      if (n > bestLen) {
        bestLen = n;
        best = exp;
      }
    }
    if (expected === undefined) {
      const exp = best ?? [];
      const n = Math.max(0, bestLen);
      fail(
        'prefix',
        `no snapshot RV explains the stream; first mismatch at #${n}: got ${describe(data[n])}, want ${describe(exp[n])}`,
      );
      return v;
    }
  } else {
    const start = rvOpt === '0' ? s.cacheRVAtStart : Number(rvOpt === '' ? s.floorRV : rvOpt);
    expected = ctx.history.liveAfter(start, sel);
    const n = matchLength(data, expected);
    if (n !== data.length) {
      fail('prefix', `first mismatch at #${n}: got ${describe(data[n])}, want ${describe(expected[n])}`);
      return v;
    }
  }

  // ---- completeness ----
  const forceClosedAllowed = ctx.mode === 'off' && s.end === 'done' && err === undefined;
  if (s.end === 'open' && s.readingAtEnd && data.length !== expected.length) {
    fail(
      'complete',
      `open session read to the end got ${data.length} of ${expected.length} events; next missing: ${describe(expected[data.length])}`,
    );
  }
  if (s.end === 'done' && err === undefined && !forceClosedAllowed && o.timeoutSeconds === undefined) {
    fail('complete', `the engine ended the session without an ERROR after ${data.length} of ${expected.length} events`);
  }

  // ---- bookmarks ----
  let lastRV = 0;
  let seen = 0;
  for (const r of s.received) {
    if (r.type === 'BOOKMARK') {
      if (o.allowWatchBookmarks !== true) fail('bookmark', `bookmark at ${r.rv} delivered without allowWatchBookmarks`);
      if (r.rv < lastRV) fail('bookmark', `bookmark at ${r.rv} below the last received RV ${lastRV}`);
      const owed = expected.filter((e) => e.streamRV <= r.rv).length;
      if (owed > seen)
        fail(
          'bookmark',
          `bookmark at ${r.rv} before ${owed - seen} selected event(s) at or below it were delivered (next: ${describe(expected[seen])})`,
        );
      lastRV = Math.max(lastRV, r.rv);
    } else if (r.type !== 'ERROR') {
      seen++;
      lastRV = Math.max(lastRV, expected[seen - 1]!.streamRV);
    }
  }

  // ---- an in-flight 410 ----
  if (err !== undefined) {
    if (err.code !== 410) fail('error', `unexpected ERROR ${err.code}: ${err.message}`);
    else if (ctx.mode === 'off' && data.length > 0) fail('error', 'off mode never sends an in-flight 410');
    else {
      const m = /too old resource version: (\d+) \((\d+)\)/.exec(err.message ?? '');
      if (m === null) fail('error', `410 message not in the Kubernetes form: ${err.message}`);
      else {
        const pos = Number(m[1]);
        const oldestMinus1 = Number(m[2]);
        if (!(pos < oldestMinus1))
          fail('error', `410 for position ${pos} although the history served from ${oldestMinus1}`);
        if (!ctx.observedOldest.has(oldestMinus1 + 1))
          fail('error', `410 names oldest ${oldestMinus1 + 1}, which the history never had`);
        const lastData = data.length === 0 ? 0 : data[data.length - 1]!.rv;
        if (data.length > 0 && pos < Math.min(lastData, expected[data.length - 1]!.streamRV))
          fail('error', `410 position ${pos} below the last delivered RV ${lastData}`);
      }
    }
  }
  return v;
}

/** How many leading received events equal the expected ones. */
function matchLength(got: Received[], want: Expected[]): number {
  let i = 0;
  for (; i < got.length && i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (g.type !== w.type || g.key !== w.key || g.rv !== w.rv) break;
  }
  return i;
}
