/**
 * A store that can tell whether its backend is reachable right now (KubeStore: its watch cannot
 * reach the upstream). /readyz answers 503 with the reason while it is not.
 */
export interface ReportsReachability {
  /** Why the backend is unreachable, or undefined while it is reachable. */
  unreachableReason(): string | undefined;
}

export function reportsReachability(store: object | undefined): store is ReportsReachability {
  return store !== undefined && typeof (store as Partial<ReportsReachability>).unreachableReason === 'function';
}
