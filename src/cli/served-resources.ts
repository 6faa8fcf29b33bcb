/**
 * The resources `watchcache serve` serves: the ones `--resources` names, and
 * core/v1 `events` in any case (writable, like any served resource), because
 * `kubectl describe` lists the events of the object it describes and fails
 * when the server has no events resource.
 */
const ALWAYS_SERVED = ['events'] as const;

export function servedResources(requested: readonly string[]): string[] {
  const out = [...requested];
  for (const name of ALWAYS_SERVED) if (!out.includes(name)) out.push(name);
  return out;
}
