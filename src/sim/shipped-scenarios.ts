/**
 * The scenarios shipped with the package (scenarios/*.json at the package
 * root): what `watchcache simulate` runs when no --scenario is given.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIPPED_SCENARIOS = [
  'proxy-fleet-blip.json',
  'wan-node-agents.json',
  'overloaded-dispatcher.json',
  'many-cohorts.json',
] as const;

/** The directory holding the shipped scenarios (dist/src/sim -> package root), else ./scenarios. */
function scenariosDir(): string {
  const fromPackage = fileURLToPath(new URL('../../../scenarios/', import.meta.url));
  if (existsSync(resolve(fromPackage, SHIPPED_SCENARIOS[0]))) return fromPackage;
  return resolve('scenarios');
}

export function shippedScenarioFiles(): string[] {
  const dir = scenariosDir();
  return SHIPPED_SCENARIOS.map((f) => resolve(dir, f));
}
