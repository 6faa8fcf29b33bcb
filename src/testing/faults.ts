/**
 * Test-only fault injection. The correctness harness switches one fault on
 * to prove it would catch the bug (issue: "Proof that it can fail"). With no
 * fault active every hook is one property read on a module constant.
 *
 * Faults (each fires once, after `skip` opportunities):
 *  - drop: the live path loses one event (position moves, nothing pushed)
 *  - duplicate: the live path pushes one event twice
 *  - reorder: the live path swaps two consecutive events of one watcher
 *  - bookmark-backwards: one bookmark carries an RV below the position
 *  - skip-transition: one ADDED/DELETED selector transition is not delivered
 *  - early-resync: a pass resyncs a member before its scan reached the resync point
 */
export type FaultName = 'drop' | 'duplicate' | 'reorder' | 'bookmark-backwards' | 'skip-transition' | 'early-resync';
export const FAULT_NAMES: readonly FaultName[] = ['drop', 'duplicate', 'reorder', 'bookmark-backwards', 'skip-transition', 'early-resync'];

export const FAULTS: { active: FaultName | undefined; skip: number; fired: boolean } = {
  active: undefined,
  skip: 0,
  fired: false,
};

/** Arm `name` (undefined disarms); it fires once after `skip` opportunities. */
export function armFault(name: FaultName | undefined, skip = 0): void {
  FAULTS.active = name;
  FAULTS.skip = skip;
  FAULTS.fired = false;
}

/** True exactly once for the armed fault, after its skips. */
export function fault(name: FaultName): boolean {
  if (FAULTS.active !== name || FAULTS.fired) return false;
  if (FAULTS.skip > 0) {
    FAULTS.skip--;
    return false;
  }
  FAULTS.fired = true;
  return true;
}
