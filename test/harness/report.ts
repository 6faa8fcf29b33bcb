/** Formatting of harness violations (one line per violation, with the session's start and tail). */
import type { Violation } from './session.js';

export function formatViolation(v: Violation): string {
  const s = v.session;
  const o = s.options;
  const opts = JSON.stringify({
    rv: o.resourceVersion,
    sie: o.sendInitialEvents,
    ns: o.namespace,
    l: o.labelSelector,
    f: o.fieldSelector,
    bm: o.allowWatchBookmarks,
    cap: o.channelCapacity,
    timeout: o.timeoutSeconds,
  });
  const tail = s.received
    .slice(-6)
    .map((r) => `${r.type}:${r.key}@${r.rv}`)
    .join(' ');
  return `  [${v.rule}] consumer ${s.consumer} session ${s.index} ${opts} end=${s.end}: ${v.detail}\n    last received: ${tail}`;
}
