/**
 * `npm run soak -- --sessions 1000000 [--minutes 60] [--modes off,alpha,beta] [--seed N]`:
 * a long randomized soak of the correctness harness. Shows progress, stops at
 * the session count or the time bound, and prints the seed (and a shrunk
 * reproduction) of any failure. Exit code 1 on a failure.
 */
import { parseArgs } from 'node:util';
import { MODES, type Mode } from '../../src/index.js';
import { makeTrace, runTrace } from './run.js';
import { shrink } from './shrink.js';
import { formatViolation } from './report.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '100000' },
    minutes: { type: 'string', default: '60' },
    modes: { type: 'string', default: MODES.join(',') },
    seed: { type: 'string' },
  },
});
const target = Number(values.sessions);
const minutes = Number(values.minutes);
const modes = values.modes.split(',') as Mode[];
for (const m of modes) if (!MODES.includes(m)) throw new Error(`unknown mode ${m}`);
if (!(target > 0) || !(minutes > 0)) throw new Error('--sessions and --minutes must be > 0');
let seed = values.seed !== undefined ? Number(values.seed) : (Date.now() % 1_000_000_007) >>> 0;
const deadline = Date.now() + minutes * 60_000;
let sessions = 0;
let runs = 0;
const started = Date.now();
console.log(`soak: ${target} sessions over ${modes.join(', ')}, at most ${minutes} min, first seed ${seed}`);
while (sessions < target && Date.now() < deadline) {
  for (const mode of modes) {
    const trace = makeTrace(seed, 100 + (seed % 7) * 50, 20 + (seed % 5) * 10);
    const r = await runTrace(trace, mode);
    runs++;
    sessions += r.sessions;
    if (r.violations.length > 0) {
      process.stdout.write('\n');
      console.log(
        `FAILURE in ${mode} mode, seed ${seed}:\n${r.violations.slice(0, 5).map(formatViolation).join('\n')}`,
      );
      const small = await shrink(trace, mode);
      console.log(
        `shrunk reproduction: ${JSON.stringify(small.trace)}\n${small.violations.slice(0, 3).map(formatViolation).join('\n')}`,
      );
      process.exit(1);
    }
  }
  seed = (seed + 1) >>> 0;
  const pct = Math.min(100, (sessions / target) * 100);
  const bar = '#'.repeat(Math.floor(pct / 4)).padEnd(25, '.');
  const rate = sessions / ((Date.now() - started) / 1000);
  process.stdout.write(
    `\r[${bar}] ${pct.toFixed(1)}% ${sessions} sessions, ${runs} runs, ${rate.toFixed(0)} sessions/s, seed ${seed}   `,
  );
}
process.stdout.write('\n');
console.log(
  `soak done: ${sessions} sessions in ${runs} runs, ${((Date.now() - started) / 1000).toFixed(1)} s, no violation`,
);
