/**
 * `watchcache --version`: the name and version of the installed package,
 * read from its package.json (two directories above dist/src/cli/).
 */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const pj = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    name?: string;
    version?: string;
  };
  return `${pj.name ?? 'watchcache'} ${pj.version ?? 'unknown'}`;
}
